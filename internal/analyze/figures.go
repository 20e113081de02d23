package analyze

// The run's figures that more than one consumer reads (reports, check, the
// comparison of runs, the service, jobs) are defined here, once. The steps
// tile the window (see Step), so every per-step figure is over the same
// steps as the window's figures.

// StepTime returns the pace the run trains at: the window's length over
// the number of its steps (each step runs from its start to the next
// step's start, the last to the end of the steps' device work). ok is false
// without steps.
func (r *Result) StepTime() (ns int64, ok bool) {
	if len(r.Steps) == 0 {
		return 0, false
	}
	return r.Window.Dur() / int64(len(r.Steps)), true
}

// Utilization returns the share of the window the devices were busy,
// averaged over devices; 0 without devices or window. (Device.Utilization
// is the other figure: over the device's own span.)
func (r *Result) Utilization() float64 {
	win := r.Window.Dur()
	if len(r.Devices) == 0 || win <= 0 {
		return 0
	}
	var busy int64
	for i := range r.Devices {
		busy += r.Devices[i].WindowBusy
	}
	return float64(busy) / float64(win*int64(len(r.Devices)))
}

// WindowBusy returns the devices' busy time in the window, averaged over
// devices; 0 without devices.
func (r *Result) WindowBusy() int64 {
	if len(r.Devices) == 0 {
		return 0
	}
	var busy int64
	for i := range r.Devices {
		busy += r.Devices[i].WindowBusy
	}
	return busy / int64(len(r.Devices))
}

// PerStep returns what the verdict rule compares for a typical step: the
// loading time L on the thread the device waits for, and the device's busy
// time C, both means over the window's steps. ok is false without steps.
func (r *Result) PerStep() (input, busy int64, ok bool) {
	if len(r.Steps) == 0 {
		return 0, 0, false
	}
	for _, s := range r.Steps {
		input += s.Input
		busy += s.DeviceBusy
	}
	n := int64(len(r.Steps))
	return input / n, busy / n, true
}

// SyncPerStep returns the time a typical step spends in blocking calls on
// the launching thread(s), over the steps PerStep averages; ok is false
// without steps.
func (r *Result) SyncPerStep() (sync int64, ok bool) {
	if len(r.Steps) == 0 {
		return 0, false
	}
	for _, s := range r.Steps {
		sync += s.Sync
	}
	return sync / int64(len(r.Steps)), true
}
