package planner

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart is a line chart: series over a shared x axis, and horizontal
// reference lines (the recommended quotas over the demand curve).
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	Lines                 []RefLine
}

// Series is one line of a chart.
type Series struct {
	Name  string
	Color string
	X, Y  []float64
}

// RefLine is a horizontal line across the chart at Y.
type RefLine struct {
	Name  string
	Color string
	Y     float64
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH          = 900, 360
	padL, padR, padT, padB  = 64, 180, 36, 48
	maxPointsPerSeries      = 2000
	chartFont               = `font-family="sans-serif" font-size="12"`
	chartTitleFont          = `font-family="sans-serif" font-size="15" font-weight="bold"`
	defaultSeriesColorCount = 6
)

var defaultColors = [defaultSeriesColorCount]string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// WriteSVG draws c as a self-contained SVG document. Long series are thinned
// to their per-bucket maxima, so a month of minute samples stays a small
// file and peaks are not lost.
func (c Chart) WriteSVG(w io.Writer) error {
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for i := range s.X {
			xmin, xmax = math.Min(xmin, s.X[i]), math.Max(xmax, s.X[i])
			ymax = math.Max(ymax, s.Y[i])
		}
	}
	for _, l := range c.Lines {
		ymax = math.Max(ymax, l.Y)
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax = 0, 1
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ymax = niceCeil(ymax * 1.05)
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	px := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return padT + ph - y/ymax*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" %s>%s</text>`+"\n", padL, chartTitleFont, html.EscapeString(c.Title))
	// Axes and ticks.
	fmt.Fprintf(&b, `<g stroke="#888" stroke-width="1"><line x1="%d" y1="%g" x2="%g" y2="%g"/><line x1="%d" y1="%d" x2="%d" y2="%g"/></g>`+"\n",
		padL, padT+ph, padL+pw, padT+ph, padL, padT, padL, padT+ph)
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%g" text-anchor="end" %s>%s</text>`+"\n", padL-6, py(y)+4, chartFont, short(y))
		fmt.Fprintf(&b, `<line x1="%d" y1="%g" x2="%g" y2="%g" stroke="#eee"/>`+"\n", padL, py(y), padL+pw, py(y))
		x := xmin + (xmax-xmin)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle" %s>%s</text>`+"\n", px(x), padT+ph+16, chartFont, short(x))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%d" text-anchor="middle" %s>%s</text>`+"\n", padL+pw/2, chartH-8, chartFont, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="14" y="%g" transform="rotate(-90 14 %g)" text-anchor="middle" %s>%s</text>`+"\n",
		padT+ph/2, padT+ph/2, chartFont, html.EscapeString(c.YLabel))

	legendY := padT + 8
	legend := func(name, color string, dashed bool) {
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<line x1="%g" y1="%d" x2="%g" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%g" y="%d" %s>%s</text>`+"\n",
			padL+pw+12, legendY, padL+pw+36, legendY, color, dash, padL+pw+42, legendY+4, chartFont, html.EscapeString(name))
		legendY += 18
	}
	for i, s := range c.Series {
		color := s.Color
		if color == "" {
			color = defaultColors[i%len(defaultColors)]
		}
		xs, ys := thin(s.X, s.Y, maxPointsPerSeries)
		var pts strings.Builder
		for k := range xs {
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(xs[k]), py(ys[k]))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.TrimSpace(pts.String()))
		legend(s.Name, color, false)
	}
	for i, l := range c.Lines {
		color := l.Color
		if color == "" {
			color = defaultColors[(len(c.Series)+i)%len(defaultColors)]
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="6 4"/>`+"\n",
			padL, py(l.Y), padL+pw, py(l.Y), color)
		legend(fmt.Sprintf("%s: %s", l.Name, short(l.Y)), color, true)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// thin keeps at most n points, each bucket's highest, so a peak survives.
func thin(x, y []float64, n int) ([]float64, []float64) {
	if len(x) <= n {
		return x, y
	}
	per := (len(x) + n - 1) / n
	var ox, oy []float64
	for i := 0; i < len(x); i += per {
		end := min(i+per, len(x))
		hi := i
		for k := i; k < end; k++ {
			if y[k] > y[hi] {
				hi = k
			}
		}
		ox, oy = append(ox, x[hi]), append(oy, y[hi])
	}
	return ox, oy
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// short formats an axis value compactly.
func short(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
