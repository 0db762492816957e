// Command api lists the exported API of the repository's published modules, one line per
// identifier in the style of the Go project's api/go1.N.txt, and checks it against the
// listing committed under api/, so that every change to the surface shows in review;
// make api writes the listing and make api-check checks it.
//
//	api [-w] [-dir api] [-unpublished 'dir ...'] core-dir [module-dir ...]
//
// The arguments are the module directories, relative to the repository root (the working
// directory), as release-check takes them. For each published module, the listing
// dir/NAME.txt (NAME the module path's last element) holds every exported identifier of
// each of its packages but the internal ones and commands: top-level constants, variables,
// functions and types, the methods of exported types (promoted ones included), the
// exported fields of structs and the methods of interfaces. Types are written as go/types
// writes them, qualified by package name, parameter names left out.
//
// Without -w, a listing that differs fails, naming each identifier added or removed; with
// -w, the listings are written.
package main
