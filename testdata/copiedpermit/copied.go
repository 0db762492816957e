// Package copiedpermit is the misuse that TestVetReportsCopiedPermit shows go vet catching:
// a helper that takes a Permit by value finishes a copy, and the caller's documented-safe
// deferred Cancel then frees the slot a second time. Each line that vet must report ends in
// a comment starting "vet:" with the words of its report; the other lines hand permits on
// as the Permit doc says, and vet must say nothing of them.
package copiedpermit

import "github.com/resilience4cata/adaptivelimit"

// finish is the helper of the misuse: its p is a copy.
func finish(p adaptivelimit.Permit, err error) { // vet: passes lock by value
	p.Done(err)
}

func call(l *adaptivelimit.Limiter) {
	p, err := l.Acquire()
	if err != nil {
		return
	}
	defer p.Cancel()
	finish(p, nil) // vet: call of finish copies lock value
}

func batch(l *adaptivelimit.Limiter) {
	var held []adaptivelimit.Permit
	for range 3 {
		p, _ := l.Acquire()
		held = append(held, p) // vet: call of append copies lock value
	}
	for _, p := range held { // vet: range var p copies lock
		p.Done(nil)
	}
}

// send copies p into ch, and vet does not see it: the README says so, and
// TestVetReportsCopiedPermit fails if vet ever reports it, for the README to say so too.
func send(l *adaptivelimit.Limiter, ch chan adaptivelimit.Permit) {
	p, _ := l.Acquire()
	defer p.Cancel()
	ch <- p
}

// The same, written as the Permit doc says.

func finishPointer(p *adaptivelimit.Permit, err error) { p.Done(err) }

func callPointer(l *adaptivelimit.Limiter) {
	p, err := l.Acquire()
	if err != nil {
		return
	}
	defer p.Cancel()
	finishPointer(&p, nil)
}

func batchMoved(l *adaptivelimit.Limiter) {
	var held []adaptivelimit.Permit
	for range 3 {
		p, _ := l.Acquire()
		held = append(held, p.Move())
	}
	for i := range held {
		held[i].Done(nil)
	}
}

func acquire(l *adaptivelimit.Limiter) (adaptivelimit.Permit, bool) {
	p, err := l.Acquire()
	return p.Move(), err == nil
}

var _ = []any{call, batch, callPointer, batchMoved, acquire}
