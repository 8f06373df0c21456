package planner

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func TestChartIsWellFormedSVGWithEverySeriesAndLine(t *testing.T) {
	var x, y []float64
	for i := 0; i < 10000; i++ {
		x, y = append(x, float64(i)), append(y, float64(i%100))
	}
	y[5000] = 1000 // a peak the thinning must keep
	c := Chart{Title: "demand <&>", XLabel: "hours", YLabel: "slots",
		Series: []Series{{Name: "demand", X: x, Y: y}},
		Lines:  []RefLine{{Name: "rule of thumb", Y: 12}, {Name: "cost-optimal", Y: 40}}}
	var buf bytes.Buffer
	if err := c.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	polylines, points := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
			for _, a := range se.Attr {
				if a.Name.Local == "points" {
					points = len(strings.Fields(a.Value))
				}
			}
		}
	}
	s := buf.String()
	if polylines != 1 || points > maxPointsPerSeries || points < maxPointsPerSeries/2 {
		t.Fatalf("%d polylines with %d points", polylines, points)
	}
	for _, want := range []string{"demand &lt;&amp;&gt;", "rule of thumb: 12", "cost-optimal: 40"} {
		if !strings.Contains(s, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}

func TestThinKeepsPeaks(t *testing.T) {
	var x, y []float64
	for i := 0; i < 10000; i++ {
		x, y = append(x, float64(i)), append(y, 1)
	}
	y[4321] = 99
	tx, ty := thin(x, y, 100)
	if len(tx) > 100 {
		t.Fatalf("%d points, want at most 100", len(tx))
	}
	found := false
	for i := range tx {
		if ty[i] == 99 && tx[i] == 4321 {
			found = true
		}
	}
	if !found {
		t.Fatal("the peak was thinned away")
	}
}
