// Package nsight reads the SQLite databases that Nsight Systems writes with
// `nsys export --type sqlite` into the trace model.
//
// Device work comes from CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY and _MEMSET
// (a device track per GPU and stream), host CUDA calls from _RUNTIME (a
// host track per thread, linked to their device work by correlationId),
// device-side synchronisation records from _SYNCHRONIZATION (overlays on
// the stream), NVTX_EVENTS ranges and marks and OSRT_API calls as host
// events; names come from StringIds and ThreadNames. Tables and columns
// are looked up as they are (their set moves between export versions);
// rows are streamed, never loaded whole. The database is opened read-only
// and immutable, from the file tracegap opened or a private copy of the
// input, and never from a path the database names.
package nsight
