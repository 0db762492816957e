package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgpdf" // pdf
	_ "gonum.org/v1/plot/vg/vgsvg" // svg
)

func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

var (
	capacityColor = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	policyColors  = map[string]color.Color{
		"gradient2":   color.RGBA{R: 31, G: 119, B: 180, A: 255},
		"aimd":        color.RGBA{R: 44, G: 160, B: 44, A: 255},
		"vegas":       color.RGBA{R: 140, G: 86, B: 75, A: 255},
		"lossdelay":   color.RGBA{R: 23, G: 190, B: 207, A: 255},
		unitFloorKind: color.RGBA{R: 127, G: 127, B: 127, A: 255},
		"low":         color.RGBA{R: 148, G: 103, B: 189, A: 255},
		"high":        color.RGBA{R: 255, G: 127, B: 14, A: 255},
		"none":        color.RGBA{R: 214, G: 39, B: 40, A: 255},
	}
)

// writePlot draws one row per policy, on shared scales: the limit against the
// capacity, the p99 latency against the timeout, and the goodput against what
// the capacity can complete. The file's extension picks the format.
func writePlot(path string, sc *scenario, prof profile, results []*result) error {
	limitMax, rateMax := 0.0, 0.0
	for _, r := range results {
		for _, s := range r.timeline {
			if s.limit != unlimited {
				limitMax = max(limitMax, s.exact)
			}
			limitMax = max(limitMax, float64(s.servers))
			rateMax = max(rateMax, sc.capacityRate(s.servers))
		}
	}
	// Headroom above the highest line keeps the legend off it.
	limitMax *= 1.3
	rateMax *= 1.3
	latencyMax := 1.3 * float64(sc.timeout.Milliseconds())
	xTicks := timeTicks(sc.duration.Seconds())

	what := "limit"
	if sc.clients > 1 {
		what = "sum of limits"
	}
	plots := make([][]*plot.Plot, len(results))
	for i, r := range results {
		last := i == len(results)-1
		limitLabel, limitTitle := what, what
		limitValue := func(s sample) float64 { return s.exact }
		if r.policy.fixed == unlimited {
			limitLabel, limitTitle = "in flight", "in flight"
			limitValue = func(s sample) float64 { return min(float64(s.inFlight), limitMax) }
			for _, s := range r.timeline {
				if float64(s.inFlight) > limitMax {
					limitTitle = "in flight (off the scale)"
					break
				}
			}
		}
		plots[i] = []*plot.Plot{
			panel(r, fmt.Sprintf("%s: %s", r.policy.label, limitTitle), limitMax, last, xTicks,
				series{"capacity", capacityColor, true, func(s sample) float64 { return float64(s.servers) }},
				series{limitLabel, policyColors[r.policy.kind], false, limitValue}),
			panel(r, fmt.Sprintf("%s: p99 latency, ms", r.policy.label), latencyMax, last, xTicks,
				series{"timeout", capacityColor, true, func(sample) float64 { return float64(sc.timeout.Milliseconds()) }},
				series{"p99", policyColors[r.policy.kind], false, func(s sample) float64 { return float64(s.p99) / 1e6 }}),
			panel(r, fmt.Sprintf("%s: goodput, calls/s", r.policy.label), rateMax, last, xTicks,
				series{"capacity", capacityColor, true, func(s sample) float64 { return sc.capacityRate(s.servers) }},
				series{"goodput", policyColors[r.policy.kind], false, func(s sample) float64 { return s.goodput }}),
		}
	}

	const tileW, tileH = 3.4 * vg.Inch, 1.9 * vg.Inch
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	canvas, err := draw.NewFormattedCanvas(3*tileW, vg.Length(len(results))*tileH, format)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: len(results), Cols: 3, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 3,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	dc := draw.New(canvas)
	dc.FillPolygon(color.White, []vg.Point{dc.Min, {X: dc.Max.X, Y: dc.Min.Y}, dc.Max, {X: dc.Min.X, Y: dc.Max.Y}})
	for i, row := range plot.Align(plots, tiles, dc) {
		for j, c := range row {
			plots[i][j].Draw(c)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// series is one line of a panel: a value of each window's sample.
type series struct {
	name   string
	color  color.Color
	dashed bool
	value  func(sample) float64
}

func panel(r *result, title string, yMax float64, xLabel bool, xTicks plot.Ticker, lines ...series) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, yMax
	p.X.Tick.Marker = xTicks
	p.Y.Tick.Marker = plainTicks{}
	if xLabel {
		p.X.Label.Text = "time, s"
	}
	p.Legend.Top = true
	// Text after the icons: where an SVG viewer lacks Liberation Sans, a wider
	// font runs past the text's end instead of over the icons.
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	for _, s := range lines {
		xys := make(plotter.XYs, len(r.timeline))
		for i, sample := range r.timeline {
			xys[i] = plotter.XY{X: float64(sample.at) / 1e9, Y: s.value(sample)}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			continue // no samples: an empty panel says as much
		}
		line.Color = s.color
		line.Width = vg.Points(1.2)
		if s.dashed {
			line.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		}
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	return p
}

// plainTicks are gonum's default ticks, labelled without trailing zeros.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
}

// timeTicks labels the time axis every 1, 2, 5, 10, 15, 20 or 30 units of
// seconds, minutes or hours, with at most six steps.
func timeTicks(seconds float64) plot.ConstantTicks {
	step := 1.0
	for _, unit := range []float64{1, 60, 3600} {
		for _, n := range []float64{1, 2, 5, 10, 15, 20, 30} {
			if step = n * unit; seconds/step <= 6 {
				return constantTicks(seconds, step)
			}
		}
	}
	return constantTicks(seconds, seconds/6)
}

func constantTicks(seconds, step float64) plot.ConstantTicks {
	var ticks plot.ConstantTicks
	for t := 0.0; t <= seconds+step/1e6; t += step {
		ticks = append(ticks, plot.Tick{Value: t, Label: strconv.FormatFloat(t, 'f', -1, 64)})
	}
	return ticks
}
