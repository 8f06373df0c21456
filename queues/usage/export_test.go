package usage

// SetPage sets how many usage entries one read returns, so a test can
// cross page boundaries with a handful of records; the returned func
// restores it.
func SetPage(n int64) func() {
	old := page
	page = n
	return func() { page = old }
}
