package advisor

// Advise applies every rule to w with the default thresholds.
func Advise(w Window) []Recommendation { return DefaultOptions().Advise(w) }

// Advise applies every rule to w with o's thresholds (zero fields take
// their defaults). The order is fixed: prices, elastic waits, watermark gap,
// watermark headroom, fixed idle, teams' idle shares by team, job shapes
// the machines cannot hold, then templates, largest first. Warnings
// thus come before cost advice, and the same window always reads the same.
// A balanced window gets nil.
func (o Options) Advise(w Window) []Recommendation {
	o = o.withDefaults()
	var out []Recommendation
	for _, rule := range []func(Window) (Recommendation, bool){
		pricesMissing,
		o.elasticWaits,
		o.watermarkGap,
		o.watermarkHeadroom,
		o.fixedIdle,
	} {
		if r, ok := rule(w); ok {
			out = append(out, r)
		}
	}
	out = append(out, o.shareIdle(w)...)
	out = append(out, o.shapes(w)...)
	return append(out, templateMoves(w)...)
}
