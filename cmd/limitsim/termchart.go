package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

const (
	chartWidth  = 64
	chartHeight = 13 // 12 steps, so that the labels every 3 rows are quarters
)

// writeTerminalChart draws the adaptive policies' limits (summed over the
// clients in a fleet) and the capacity over time, one letter per policy.
// Fixed bulkheads are flat lines and no limit has none, so they are left out.
func writeTerminalChart(w io.Writer, sc *scenario, results []*result) {
	var series []*result
	for _, r := range results {
		if r.policy.adaptive() {
			series = append(series, r)
		}
	}
	if len(series) == 0 || len(results[0].timeline) == 0 {
		return
	}
	timeline := results[0].timeline
	top := 0.0
	for i, s := range timeline {
		top = max(top, float64(s.servers))
		for _, r := range series {
			top = max(top, r.timeline[i].exact)
		}
	}
	yMax := niceCeil(top)

	grid := make([][]rune, chartHeight)
	for row := range grid {
		grid[row] = []rune(strings.Repeat(" ", chartWidth))
	}
	plot := func(column int, value float64, mark rune) {
		row := chartHeight - 1 - int(math.Round(value/yMax*float64(chartHeight-1)))
		if old := grid[row][column]; old != ' ' && old != '·' && old != mark {
			mark = '*'
		}
		grid[row][column] = mark
	}
	for column := range chartWidth {
		i := (column+1)*len(timeline)/chartWidth - 1
		i = max(i, 0)
		plot(column, float64(timeline[i].servers), '·')
		for _, r := range series {
			plot(column, r.timeline[i].exact, letter(r.policy))
		}
	}

	legend := []string{"· capacity"}
	for _, r := range series {
		legend = append(legend, fmt.Sprintf("%c %s", letter(r.policy), r.policy.label))
	}
	if len(series) > 1 {
		legend = append(legend, "* more than one")
	}
	what := "limit"
	if sc.clients > 1 {
		what = "sum of the clients' limits"
	}
	fmt.Fprintf(w, "\n%s and capacity over time (%s)\n", what, strings.Join(legend, ", "))
	for row, line := range grid {
		label := ""
		if row%3 == 0 {
			label = fmt.Sprintf("%.0f", yMax*float64(chartHeight-1-row)/float64(chartHeight-1))
		}
		fmt.Fprintf(w, "%6s ┤%s\n", label, strings.TrimRight(string(line), " "))
	}
	fmt.Fprintf(w, "%6s └%s\n", "", strings.Repeat("─", chartWidth))
	start, end := "0s", strconv.FormatFloat(sc.duration.Seconds(), 'f', -1, 64)+"s"
	fmt.Fprintf(w, "%6s  %s%s%s\n", "", start, strings.Repeat(" ", chartWidth-len(start)-len(end)), end)
}

// letter marks a policy in the chart: its label's first letter, and '1' for LossDelay
// floored at one call in flight, beside LossDelay's 'L'.
func letter(p policy) rune {
	if p.kind == unitFloorKind {
		return '1'
	}
	return rune(p.label[0])
}

// niceCeil rounds up to a number whose quarters read well: 1, 1.2, 1.6, 2,
// 3, 4, 6 or 8 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	scale := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.6, 2, 3, 4, 6, 8, 10} {
		if m*scale >= v {
			return m * scale
		}
	}
	return 10 * scale
}
