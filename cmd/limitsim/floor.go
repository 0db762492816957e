package main

import "github.com/resilience4cata/adaptivelimit"

// unitFloorKind is LossDelay with its limit floored at one call in flight, as it was before
// limits below one (issue 38): the fanin scenario's "before". -policies takes it; no
// scenario but the real fanin lists it by default.
const unitFloorKind = "lossdelay-floor1"

// unitFloor turns a configuration's limits below one call in flight off.
func unitFloor(c *adaptivelimit.Config) { c.SubUnitFloor = 1 }
