package analyze

// SetAdviseForTest sets the function that writes findings in this
// package's tests (see adviseForTest).
func SetAdviseForTest(f func(*Result)) { adviseForTest = f }
