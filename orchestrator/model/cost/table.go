package cost

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TableViews returns the views Report.Table prints, in the order the CLI
// lists them.
func TableViews() []string { return []string{"pool", "team", "template", "day", "job"} }

// Table writes one view of the report as an aligned text table, a row per
// pool, team, template, day or job (by names the view; see TableViews)
// followed by a total row. Slot and worker time is in hours, money in the
// pools' currency.
func (r Report) Table(w io.Writer, by string) error {
	var t table
	switch by {
	case "pool":
		r.poolTable(&t)
	case "team":
		groupTable(&t, "TEAM", r.Teams, r.Total.Figures)
	case "template":
		groupTable(&t, "TEMPLATE", r.Templates, r.Total.Figures)
	case "day":
		r.dayTable(&t)
	case "job":
		r.jobTable(&t)
	default:
		return fmt.Errorf("cost table by %q: unknown view (use %s)", by, strings.Join(TableViews(), ", "))
	}
	_, err := io.WriteString(w, t.String())
	return err
}

var figureHeads = []string{"SLOT-H", "COST", "LOST-SLOT-H", "LOST-COST", "PREMIUM"}

func figureCells(f Figures) []string {
	return []string{hours(f.SlotHours), money(f.Cost), hours(f.LostSlotHours), money(f.LostCost), money(f.Premium)}
}

var paidHeads = []string{"PAID-SLOT-H", "PAID", "IDLE-SLOT-H", "IDLE-COST"}

func paidCells(p Paid) []string {
	return []string{hours(p.PaidSlotHours), money(p.PaidCost), hours(p.IdleSlotHours), money(p.IdleCost)}
}

func (r Report) poolTable(t *table) {
	t.left = 2
	head := []string{"POOL", "KIND", "WORKER-H", "BILLED-WORKER-H"}
	head = append(append(append(head, paidHeads...), "USED", "IDLE"), figureHeads...)
	t.add(head...)
	for _, p := range r.Pools {
		row := []string{p.Pool, string(p.Kind), hours(p.WorkerHours), hours(p.BilledWorkerHours)}
		row = append(append(append(row, paidCells(p.Paid)...), share(p.UsedShare), share(p.IdleShare)), figureCells(p.Figures)...)
		t.add(row...)
	}
	var wh, bwh float64
	for _, p := range r.Pools {
		wh += p.WorkerHours
		bwh += p.BilledWorkerHours
	}
	row := []string{"TOTAL", "", hours(wh), hours(bwh)}
	row = append(append(append(row, paidCells(r.Total.Paid)...), share(r.Total.UsedShare), share(r.Total.IdleShare)),
		figureCells(r.Total.Figures)...)
	t.add(row...)
}

func groupTable(t *table, name string, rows []GroupRow, total Figures) {
	t.left = 1
	t.add(append([]string{name}, figureHeads...)...)
	for _, g := range rows {
		t.add(append([]string{orDash(g.Name)}, figureCells(g.Figures)...)...)
	}
	t.add(append([]string{"TOTAL"}, figureCells(total)...)...)
}

func (r Report) dayTable(t *table) {
	t.left = 1
	t.add(append(append([]string{"DAY"}, figureHeads...), paidHeads...)...)
	for _, d := range r.Days {
		t.add(append(append([]string{d.Day}, figureCells(d.Figures)...), paidCells(d.Paid)...)...)
	}
	t.add(append(append([]string{"TOTAL"}, figureCells(r.Total.Figures)...), paidCells(r.Total.Paid)...)...)
}

func (r Report) jobTable(t *table) {
	t.left = 3
	t.add(append([]string{"JOB", "TEAM", "TEMPLATE", "ATTEMPTS"}, figureHeads...)...)
	attempts := 0
	for _, j := range r.Jobs {
		attempts += j.Attempts
		t.add(append([]string{j.JobID, orDash(j.Team), orDash(j.Template), strconv.Itoa(j.Attempts)}, figureCells(j.Figures)...)...)
	}
	t.add(append([]string{"TOTAL", "", "", strconv.Itoa(attempts)}, figureCells(r.Total.Figures)...)...)
}

func hours(h float64) string { return strconv.FormatFloat(h, 'f', 3, 64) }
func money(m float64) string { return strconv.FormatFloat(m, 'f', 2, 64) }
func share(s float64) string { return strconv.FormatFloat(100*s, 'f', 1, 64) + "%" }

// orDash shows an unset team or template as "-", so the column stays
// readable.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// table aligns cells in columns: the first left columns (names) to the
// left, the rest (numbers) to the right, so digits line up.
type table struct {
	left int
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var width []int
	for _, row := range t.rows {
		for i, c := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range t.rows {
		var line strings.Builder
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i < t.left {
				line.WriteString(c + pad)
			} else {
				line.WriteString(pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
