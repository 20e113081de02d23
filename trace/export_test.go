package trace

// Refused lets the external tests check refusals (refused).
var Refused = refused
