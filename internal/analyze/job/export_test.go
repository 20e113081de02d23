package job

// SetAdviseForTest sets the function that writes a job's findings in this
// package's tests (see adviseForTest).
func SetAdviseForTest(f func(*Result)) { adviseForTest = f }
