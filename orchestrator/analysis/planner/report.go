package planner

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// row is one line of the comparison table.
type row struct {
	Method     string
	Fixed      int
	Watermarks string
	ClosedForm string
	Result     sim.Result
	Verdict    Verdict
	OfOptimum  float64
}

func marksOf(m Watermarks, overflow bool, wait time.Duration) string {
	s := fmt.Sprintf("%.0f/%.0f", 100*m.High, 100*m.Low)
	if overflow {
		s += " +overflow " + dur(wait)
	}
	return s
}

func (p Plan) rows() []row {
	var out []row
	of := func(r sim.Result) float64 {
		if p.Optimum.Cost <= 0 {
			return 0
		}
		return r.Cost.Total / p.Optimum.Cost
	}
	for _, r := range p.Recommendations {
		out = append(out, row{r.Method, r.FixedSlots, marksOf(r.Watermarks, r.CoreOverflow, r.CoreMaxWait),
			fmt.Sprintf("%.2f", r.ClosedForm), r.Simulated, r.Verdict, of(r.Simulated)})
	}
	for _, h := range p.History {
		if h.Strategy == StrategyAllFixed {
			out = append(out, row{"all fixed (peak)", h.Result.FixedSlots, "-", "-", h.Result, h.Verdict, of(h.Result)})
		}
	}
	for _, h := range p.History {
		if h.Strategy == StrategyAllElastic {
			out = append(out, row{"all elastic", 0, "-", "-", h.Result, h.Verdict, of(h.Result)})
		}
	}
	return out
}

// WriteText writes the plan as tables for a terminal, ending with the
// verdict.
func (p Plan) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "trace %s: %d jobs over %.1f days; peak demand %d slots, base load %.1f slots (lowest hourly average)\n",
		p.Trace, p.Jobs, p.Span.Hours()/24, p.Peak, p.BaseLoad)
	fmt.Fprintf(tw, "prices: fixed %.3f, elastic %.3f per slot-hour (ratio %.2f: break-even %.1f h/day; the 8 h rule assumes 3.00)\n",
		p.Prices.FixedPerSlotHour, p.Prices.ElasticPerSlotHour, p.Prices.Ratio(), p.Prices.BreakEvenHours())
	fmt.Fprintf(tw, "offline optimum: %d fixed slots at %.2f (fixed %.2f + elastic %.2f), elastic capacity there the instant it is needed\n",
		p.Optimum.FixedSlots, p.Optimum.Cost, p.Optimum.Fixed, p.Optimum.Elastic)
	if p.Optimum.ElasticOnly > 0 {
		fmt.Fprintf(tw, "  of the elastic, %.2f is for jobs no fixed pool can run (models bought only elastic)\n", p.Optimum.ElasticOnly)
	}
	if len(p.Relaxed) > 0 {
		fmt.Fprintf(tw, "labels: the trace's jobs require %s, which no pool declares: planned as if every worker carried them (declare them on the pools to plan per model)\n",
			strings.Join(p.Relaxed, ", "))
	}
	if line := p.Optimum.shapesLine(); line != "" {
		fmt.Fprintln(tw, line)
	}
	if p.Gap != nil && p.Best.Feasible {
		if line := p.Gap.line(p.Optimum, p.Best.Result.Cost.Total); line != "" {
			fmt.Fprintln(tw, line)
		}
	}
	fmt.Fprintf(tw, "search: %d simulations in %s (%d on the tuning window, %d on the whole history)\n\n",
		p.Simulations, p.Took.Round(10*time.Millisecond), len(p.Sweep), len(p.History))
	fmt.Fprintln(tw, "METHOD\tFIXED\tWATERMARKS\tCOST (CLOSED FORM)\tCOST (SIMULATED)\tX OPTIMUM\tFIXED IDLE\tBURST WAIT P95\tCORE WAIT P95\tPREEMPTIONS\tLOST SLOT-H\tFEASIBLE")
	for _, r := range p.rows() {
		res := r.Result
		feasible := "yes"
		if !r.Verdict.Feasible {
			feasible = "no: " + r.Verdict.Why
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%.3f\t%.0f%%\t%s\t%s\t%d\t%.1f\t%s\n", r.Method, r.Fixed, r.Watermarks, r.ClosedForm,
			res.Cost.Total, r.OfOptimum, 100*res.FixedIdleShare, dur(res.ElasticWait.P95), dur(res.CoreWait.P95),
			res.Preemptions.Count(), res.LostWork, feasible)
	}
	fmt.Fprintln(tw)
	for _, r := range p.Recommendations {
		fmt.Fprintf(tw, "%s: %s\n", r.Method, r.Why)
	}
	if err := p.writePools(tw); err != nil {
		return err
	}
	for _, a := range p.ShapeAdvice {
		fmt.Fprintf(tw, "shapes: %s.\n  %s.\n", a.Title, a.Action)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TEMPLATE\tCLASS\tJOBS\tACTIVE H/DAY\tSLOT-H/DAY\tBREAK-EVEN H\tBELONGS\t8 H RULE SAYS\tMOVE")
	for _, t := range p.Templates {
		move := ""
		if t.Moves {
			move = "move to " + t.Belongs
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\n", t.Template, t.Class, t.Jobs, t.ActiveHoursPerDay,
			t.SlotHoursPerDay, t.BreakEvenHours, t.Belongs, t.RuleOfThumb, move)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", p.VerdictLine())
	return err
}

func dur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(time.Second).String()
}

// DemandChart draws the hourly demand with the recommended quotas.
func (p Plan) DemandChart() Chart {
	h := p.Curve.Hourly()
	x, y := make([]float64, len(h)), make([]float64, len(h))
	for i, v := range h {
		x[i], y[i] = float64(i)/24, v
	}
	c := Chart{Title: "Demand (hourly average) and the recommended quotas", XLabel: "days", YLabel: "slots",
		Series: []Series{{Name: "demand", X: x, Y: y}}}
	for _, r := range p.Recommendations {
		c.Lines = append(c.Lines, RefLine{Name: r.Method, Y: float64(r.FixedSlots)})
	}
	return c
}

// SweepCharts draw cost and p95 burst wait against the quota, one line per
// watermark pair, from the tuning window.
func (p Plan) SweepCharts() (cost, wait Chart) {
	window := fmt.Sprintf("last %d days", p.TuneDays)
	if p.TuneDays <= 0 {
		window = "the whole trace"
	}
	cost = Chart{Title: "Simulated cost by quota (" + window + ")", XLabel: "fixed slots", YLabel: "cost"}
	wait = Chart{Title: "Simulated p95 burst and core waits by quota", XLabel: "fixed slots", YLabel: "minutes"}
	type line struct {
		m    Watermarks
		ov   bool
		wait time.Duration
	}
	byMarks := map[line][]Point{}
	var order []line
	for _, pt := range p.Sweep {
		if pt.Strategy != StrategyHybrid {
			continue
		}
		k := line{pt.Watermarks, pt.CoreOverflow, pt.CoreMaxWait}
		if _, ok := byMarks[k]; !ok {
			order = append(order, k)
		}
		byMarks[k] = append(byMarks[k], pt)
	}
	for _, k := range order {
		pts := byMarks[k]
		slices.SortFunc(pts, func(a, b Point) int { return cmp.Compare(a.FixedSlots, b.FixedSlots) })
		name := marksOf(k.m, k.ov, k.wait)
		var cs, ws, cw Series
		cs.Name, ws.Name, cw.Name = name, name+" burst", name+" core"
		for _, pt := range pts {
			x := float64(pt.FixedSlots)
			cs.X, cs.Y = append(cs.X, x), append(cs.Y, pt.Result.Cost.Total)
			ws.X, ws.Y = append(ws.X, x), append(ws.Y, pt.Result.ElasticWait.P95.Minutes())
			cw.X, cw.Y = append(cw.X, x), append(cw.Y, pt.Result.CoreWait.P95.Minutes())
		}
		cost.Series, wait.Series = append(cost.Series, cs), append(wait.Series, ws, cw)
	}
	wait.Lines = []RefLine{{Name: "target", Y: p.WaitTarget.Minutes()}}
	return cost, wait
}

var reportHTML = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"dur": dur,
	"f2":  func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"f1":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"f3":  func(f float64) string { return fmt.Sprintf("%.3f", f) },
	"pre": func(r sim.Result) int { return r.Preemptions.Count() },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Ballast quota plan: {{.Plan.Trace}}</title>
<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.best{background:#eef8ee}</style></head><body>
<h1>Quota plan for {{.Plan.Trace}}</h1>
<p>{{.Plan.Jobs}} jobs over {{f1 .Days}} days. Peak demand {{.Plan.Peak}} slots; base load {{f1 .Plan.BaseLoad}} slots (lowest hourly average).
Fixed {{f2 .Plan.Prices.FixedPerSlotHour}} and elastic {{f2 .Plan.Prices.ElasticPerSlotHour}} per slot-hour: a fixed slot pays off when busy more than
{{f1 .Plan.Prices.BreakEvenHours}} h a day (the "8 h" rule of thumb assumes elastic at 3x fixed).</p>
<table><tr><th>method</th><th>fixed slots</th><th>watermarks</th><th>cost, closed form</th><th>cost, simulated</th><th>fixed idle</th>
<th>x optimum</th><th>burst wait p95</th><th>core wait p95</th><th>preemptions</th><th>lost slot-hours</th><th>deadline misses</th><th>feasible</th></tr>
{{range .Rows}}<tr><td>{{.Method}}</td><td>{{.Fixed}}</td><td>{{.Watermarks}}</td><td>{{.ClosedForm}}</td><td>{{f2 .Result.Cost.Total}}</td>
<td>{{pct .Result.FixedIdleShare}}</td><td>{{f3 .OfOptimum}}</td><td>{{dur .Result.ElasticWait.P95}}</td><td>{{dur .Result.CoreWait.P95}}</td><td>{{pre .Result}}</td>
<td>{{f1 .Result.LostWork}}</td><td>{{.Result.DeadlineMisses}}</td><td>{{if .Verdict.Feasible}}yes{{else}}no: {{.Verdict.Why}}{{end}}</td></tr>
{{end}}</table>
<p><b>{{.Verdict}}</b></p>
<p>How the pick was made: a plan is feasible when every job ran and the p95 waits of core and of burst jobs are within {{dur .Plan.WaitTarget}} over
the whole history; only feasible plans are ranked by cost. The search ran {{.Plan.Simulations}} simulations: the core overflow wait and then the watermark pair at the tuning
window's offline optimum, quota searches for the best of them and the best without overflow, then the best window plans, all fixed, all
elastic and the closed forms on the whole history, and a last quota search there. The offline optimum for the whole history is
{{.Plan.Optimum.FixedSlots}} slots at {{f2 .Plan.Optimum.Cost}}.</p>
<ul>{{range .Plan.Recommendations}}<li><b>{{.Method}}</b>: {{.Why}}</li>{{end}}</ul>
{{.Demand}}
{{.Cost}}
{{.Wait}}
<h2>Templates</h2>
<table><tr><th>template</th><th>class</th><th>jobs</th><th>active h/day</th><th>slot-h/day</th><th>break-even h</th><th>belongs</th><th>8 h rule says</th></tr>
{{range .Plan.Templates}}<tr{{if .Moves}} class="best"{{end}}><td>{{.Template}}</td><td>{{.Class}}</td><td>{{.Jobs}}</td><td>{{f1 .ActiveHoursPerDay}}</td>
<td>{{f1 .SlotHoursPerDay}}</td><td>{{f1 .BreakEvenHours}}</td><td>{{.Belongs}}</td><td>{{.RuleOfThumb}}</td></tr>
{{end}}</table>
<p>Highlighted templates run on the other kind of capacity than their price says they should.</p>
</body></html>
`))

// WriteHTML writes a self-contained HTML report: tables and inline SVG
// charts, nothing fetched at view time.
func (p Plan) WriteHTML(w io.Writer) error {
	svg := func(c Chart) (template.HTML, error) {
		var b bytes.Buffer
		err := c.WriteSVG(&b)
		return template.HTML(b.String()), err // our own markup; every label in it is escaped
	}
	demand, err := svg(p.DemandChart())
	if err != nil {
		return err
	}
	cc, wc := p.SweepCharts()
	cost, err := svg(cc)
	if err != nil {
		return err
	}
	wait, err := svg(wc)
	if err != nil {
		return err
	}
	return reportHTML.Execute(w, map[string]any{"Plan": p, "Rows": p.rows(), "Days": p.Span.Hours() / 24, "Verdict": p.VerdictLine(),
		"Demand": demand, "Cost": cost, "Wait": wait})
}

// shapesLine says what the fleet's shapes do to the optimum: the floor that
// jobs too big for elastic machines set, and elastic rented in whole
// machines.
func (o Optimum) shapesLine() string {
	var why []string
	if o.Floor > 0 {
		why = append(why, fmt.Sprintf("jobs no elastic machine can hold need %d slots on the quota", o.Floor))
	}
	if o.Machine > 1 {
		why = append(why, fmt.Sprintf("elastic capacity comes in machines of %d slots", o.Machine))
	}
	if len(why) == 0 {
		return ""
	}
	w := o.WithoutShapes
	if w == nil {
		return "shapes: " + strings.Join(why, "; ") + "; the optimum is the same without them"
	}
	return fmt.Sprintf("shapes: %s; they add %.2f (%.1f%%) to the optimum without them (%d slots at %.2f)",
		strings.Join(why, "; "), o.Cost-w.Cost, 100*(o.Cost-w.Cost)/w.Cost, w.FixedSlots, w.Cost)
}

// writePools writes the recommended plan pool by pool: each fixed pool's
// quota, every pool's cost and waits, and which jobs each elastic pool's
// machines can hold.
func (p Plan) writePools(tw io.Writer) error {
	if len(p.Recommended.Pools) == 0 {
		return nil
	}
	total := 0
	for _, s := range p.Shapes.All {
		total += s.Jobs
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "POOL\tKIND\tLABELS\tFIXED\tCOST\tCORE WAIT P95\tBURST WAIT P95\tJOBS ITS MACHINES HOLD")
	for _, ps := range p.Recommended.Pools {
		holds := "-"
		if i := slices.IndexFunc(p.pools, func(q policy.Pool) bool { return q.Name == ps.Pool }); i >= 0 && ps.Kind.Elastic() {
			n, largest := p.Shapes.HeldBy(p.pools[i])
			holds = fmt.Sprintf("%d of %d (up to %d slots)", n, total, largest)
		}
		labels := LabelWords(ps.Labels)
		if labels == "" {
			labels = "-"
		}
		_, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%s\t%s\t%s\n", ps.Pool, ps.Kind, labels, ps.FixedSlots, ps.Cost,
			dur(secondsOf(ps.CoreWaitP95S)), dur(secondsOf(ps.BurstWaitP95S)), holds)
		if err != nil {
			return err
		}
	}
	return nil
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
