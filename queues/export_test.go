package queues

// SetUsagePage sets how many usage entries one read returns, so a test can
// cross page boundaries with a handful of records; the returned func
// restores it.
func SetUsagePage(n int64) func() {
	old := usagePage
	usagePage = n
	return func() { usagePage = old }
}
