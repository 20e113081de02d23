// Package chrome reads Chrome trace-event JSON (PyTorch profiler/Kineto, TensorBoard and XProf exports, Chrome tracing) into the trace model.
package chrome
