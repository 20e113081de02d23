// Package xplane reads XPlane protobuf traces (JAX, TensorFlow, XProf) into the trace model.
package xplane
