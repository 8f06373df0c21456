package planner

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/ballastdev/ballast/orchestrator/sim"
)

// row is one line of the comparison table.
type row struct {
	Method     string
	Fixed      int
	Watermarks string
	ClosedForm string
	Result     sim.Result
}

func (p Plan) rows() []row {
	var out []row
	for _, r := range p.Recommendations {
		marks := fmt.Sprintf("%.0f/%.0f", 100*r.Watermarks.High, 100*r.Watermarks.Low)
		if r.CoreOverflow {
			marks += " +overflow"
		}
		out = append(out, row{r.Method, r.FixedSlots, marks, fmt.Sprintf("%.2f", r.ClosedForm), r.Simulated})
	}
	out = append(out, row{"all fixed (peak)", p.AllFixed.FixedSlots, "-", "-", p.AllFixed},
		row{"all elastic", 0, "-", "-", p.AllElastic})
	return out
}

// WriteText writes the plan as tables for a terminal.
func (p Plan) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "trace %s: %d jobs over %.1f days; peak demand %d slots, base load %.1f slots (lowest hourly average)\n",
		p.Trace, p.Jobs, p.Span.Hours()/24, p.Peak, p.BaseLoad)
	fmt.Fprintf(tw, "prices: fixed %.3f, elastic %.3f per slot-hour (ratio %.2f: break-even %.1f h/day; the 8 h rule assumes 3.00)\n\n",
		p.Prices.FixedPerSlotHour, p.Prices.ElasticPerSlotHour, p.Prices.Ratio(), p.Prices.BreakEvenHours())
	fmt.Fprintln(tw, "METHOD\tFIXED\tWATERMARKS\tCOST (CLOSED FORM)\tCOST (SIMULATED)\tFIXED IDLE\tBURST WAIT P95\tCORE WAIT P95\tPREEMPTIONS\tLOST SLOT-H\tDEADLINE MISSES")
	for _, r := range p.rows() {
		res := r.Result
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%.0f%%\t%s\t%s\t%d\t%.1f\t%d\n", r.Method, r.Fixed, r.Watermarks, r.ClosedForm,
			res.Cost.Total, 100*res.FixedIdleShare, dur(res.ElasticWait.P95), dur(res.CoreWait.P95),
			res.Preemptions.Reclaim+res.Preemptions.Migrate+res.Preemptions.Spot, res.LostWork, res.DeadlineMisses)
	}
	fmt.Fprintln(tw)
	for _, r := range p.Recommendations {
		fmt.Fprintf(tw, "%s: %s\n", r.Method, r.Why)
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
	return tw.Flush()
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
	cost = Chart{Title: fmt.Sprintf("Simulated cost by quota (last %d days)", p.TuneDays), XLabel: "fixed slots", YLabel: "cost"}
	wait = Chart{Title: "Simulated p95 burst wait by quota", XLabel: "fixed slots", YLabel: "minutes"}
	type line struct {
		m  Watermarks
		ov bool
	}
	byMarks := map[line][]Point{}
	var order []line
	for _, pt := range p.Sweep {
		k := line{pt.Watermarks, pt.CoreOverflow}
		if _, ok := byMarks[k]; !ok {
			order = append(order, k)
		}
		byMarks[k] = append(byMarks[k], pt)
	}
	for _, k := range order {
		pts := byMarks[k]
		slices.SortFunc(pts, func(a, b Point) int { return cmp.Compare(a.FixedSlots, b.FixedSlots) })
		name := fmt.Sprintf("%.0f/%.0f", 100*k.m.High, 100*k.m.Low)
		if k.ov {
			name += " +overflow"
		}
		var cs, ws Series
		cs.Name, ws.Name = name, name
		for _, pt := range pts {
			cs.X, cs.Y = append(cs.X, float64(pt.FixedSlots)), append(cs.Y, pt.Result.Cost.Total)
			ws.X, ws.Y = append(ws.X, float64(pt.FixedSlots)), append(ws.Y, pt.Result.ElasticWait.P95.Minutes())
		}
		cost.Series, wait.Series = append(cost.Series, cs), append(wait.Series, ws)
	}
	wait.Lines = []RefLine{{Name: "target", Y: p.WaitTarget.Minutes()}}
	return cost, wait
}

var reportHTML = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"dur": dur,
	"f2":  func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"f1":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"pre": func(r sim.Result) int { return r.Preemptions.Reclaim + r.Preemptions.Migrate + r.Preemptions.Spot },
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
<th>burst wait p95</th><th>core wait p95</th><th>preemptions</th><th>lost slot-hours</th><th>deadline misses</th></tr>
{{range .Rows}}<tr><td>{{.Method}}</td><td>{{.Fixed}}</td><td>{{.Watermarks}}</td><td>{{.ClosedForm}}</td><td>{{f2 .Result.Cost.Total}}</td>
<td>{{pct .Result.FixedIdleShare}}</td><td>{{dur .Result.ElasticWait.P95}}</td><td>{{dur .Result.CoreWait.P95}}</td><td>{{pre .Result}}</td>
<td>{{f1 .Result.LostWork}}</td><td>{{.Result.DeadlineMisses}}</td></tr>
{{end}}</table>
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
	return reportHTML.Execute(w, map[string]any{"Plan": p, "Rows": p.rows(), "Days": p.Span.Hours() / 24,
		"Demand": demand, "Cost": cost, "Wait": wait})
}
