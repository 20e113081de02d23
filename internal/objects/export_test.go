package objects

// ForgetBuckets drops the buckets opened so far, so that a test's next
// open reads the credentials it has set.
func ForgetBuckets() {
	buckets.Lock()
	defer buckets.Unlock()
	for _, b := range buckets.m {
		b.Close()
	}
	buckets.m = nil
}
