package nsight

// MinRowBytes is minRowBytes, for the fuzz target's bound.
const MinRowBytes = minRowBytes
