// Package names holds the one rule for the names that leave the process: a limiter's Name,
// which metrics export as a label value, and a priority class's name, which the
// integrations send in a header or in gRPC metadata. The core checks the names of a
// Config with it, and the integrations check the class of a call's context, which no
// Config has checked, before they send it.
package names

import (
	"unicode"
	"unicode/utf8"
)

// NameRule is the rule of a limiter's name.
const NameRule = "must be valid UTF-8 without control characters"

// ClassRule is the rule of a class's name.
const ClassRule = "must be printable ASCII (space to ~), neither starting nor ending with a space"

// Name reports whether s may name a limiter: every exporter takes any valid UTF-8 as a
// label value, and a control character (a newline, NUL, DEL) breaks logs and text formats.
func Name(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// Class reports whether s may name a priority class: gRPC metadata carries only printable
// ASCII, and HTTP trims the spaces around a header's value, so a class name of these bytes
// arrives as it was sent on every wire. The empty name, the lowest class, is never sent.
func Class(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
