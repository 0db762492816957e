package main

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
)

// features returns the lines of pkg's exported API, sorted.
func features(pkg *types.Package) []string {
	w := walker{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if obj := scope.Lookup(name); obj.Exported() {
			w.object(obj)
		}
	}
	slices.Sort(w.lines)
	return slices.Compact(w.lines)
}

type walker struct {
	pkg   *types.Package
	lines []string
}

func (w *walker) emit(format string, args ...any) {
	w.lines = append(w.lines, "pkg "+w.pkg.Path()+", "+fmt.Sprintf(format, args...))
}

// qualify names another package by its name, as the Go project's listings do.
func (w *walker) qualify(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return p.Name()
}

func (w *walker) str(t types.Type) string { return types.TypeString(t, w.qualify) }

// sig writes a signature without parameter names.
func (w *walker) sig(s *types.Signature) string {
	var b strings.Builder
	b.WriteString("(")
	for i := range s.Params().Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := s.Params().At(i).Type()
		if s.Variadic() && i == s.Params().Len()-1 {
			b.WriteString("..." + w.str(t.(*types.Slice).Elem()))
		} else {
			b.WriteString(w.str(t))
		}
	}
	b.WriteString(")")
	switch n := s.Results().Len(); {
	case n == 1:
		b.WriteString(" " + w.str(s.Results().At(0).Type()))
	case n > 1:
		b.WriteString(" (")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.str(s.Results().At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

// tparams writes a type parameter list, or "" for none.
func (w *walker) tparams(l *types.TypeParamList) string {
	if l.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range l.Len() {
		tp := l.At(i)
		parts = append(parts, tp.Obj().Name()+" "+w.str(tp.Constraint()))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (w *walker) object(obj types.Object) {
	switch obj := obj.(type) {
	case *types.Const:
		w.emit("const %s %s = %s", obj.Name(), w.str(obj.Type()), obj.Val().ExactString())
	case *types.Var:
		w.emit("var %s %s", obj.Name(), w.str(obj.Type()))
	case *types.Func:
		s := obj.Type().(*types.Signature)
		w.emit("func %s%s%s", obj.Name(), w.tparams(s.TypeParams()), w.sig(s))
	case *types.TypeName:
		w.typeName(obj)
	}
}

func (w *walker) typeName(obj *types.TypeName) {
	if a, ok := obj.Type().(*types.Alias); ok {
		w.emit("type %s%s = %s", obj.Name(), w.tparams(a.TypeParams()), w.str(a.Rhs()))
		return
	}
	named := obj.Type().(*types.Named)
	head := obj.Name() + w.tparams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit("type %s struct", head)
		for i := range u.NumFields() {
			f := u.Field(i)
			switch {
			case f.Embedded() && f.Exported():
				w.emit("type %s struct, embedded %s", head, w.str(f.Type()))
			case f.Exported():
				w.emit("type %s struct, %s %s", head, f.Name(), w.str(f.Type()))
			}
		}
	case *types.Interface:
		var names []string
		unexported := false
		for i := range u.NumMethods() {
			m := u.Method(i)
			if !m.Exported() {
				unexported = true
				continue
			}
			names = append(names, m.Name())
			w.emit("type %s interface, %s%s", head, m.Name(), w.sig(m.Type().(*types.Signature)))
		}
		if unexported {
			names = append(names, "unexported methods")
		}
		// A constraint's type set: its embedded unions and types, as written.
		for i := range u.NumEmbeddeds() {
			names = append(names, w.str(u.EmbeddedType(i)))
		}
		w.emit("type %s interface { %s }", head, strings.Join(names, ", "))
	default:
		w.emit("type %s %s", head, w.str(u))
	}
	if types.IsInterface(named) {
		return
	}
	// The methods a user can call: those of *T, written with the receiver they need.
	recv := obj.Name()
	if tps := named.TypeParams(); tps.Len() > 0 {
		var names []string
		for i := range tps.Len() {
			names = append(names, tps.At(i).Obj().Name())
		}
		recv += "[" + strings.Join(names, ", ") + "]"
	}
	values := types.NewMethodSet(named)
	ptrs := types.NewMethodSet(types.NewPointer(named))
	for i := range ptrs.Len() {
		m := ptrs.At(i).Obj()
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if values.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		w.emit("method (%s) %s%s", r, m.Name(), w.sig(m.Type().(*types.Signature)))
	}
}
