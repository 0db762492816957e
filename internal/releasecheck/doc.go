// Command releasecheck checks that the repository's modules can be released at one version
// and installed by a user, as RELEASING.md describes; make release-check runs it.
//
//	releasecheck -version v0.1.0 -unpublished './bench ./cmd/limitsim' . ./grpclimit ...
//
// The arguments are the module directories, relative to the repository root (the working
// directory), the core first. It fails when a module
//
//   - requires one of the repository's modules at another version than -version, or
//     replaces a module other than the repository's own (a user's build would not see it),
//     or replaces one of them by anything but its directory;
//   - imports an internal package of another module, or a published module imports an
//     unpublished one (an unpublished module may use the core's internals: it is never
//     tagged, and always builds against the core beside it);
//   - is not tidy (go mod tidy -diff);
//
// and then, for each published module, it builds a module proxy in a temporary directory
// holding every published module at -version, zipped from the files git would commit (the
// tracked and the untracked, not ignored ones), and builds and vets the module's packages
// with their tests from a throwaway module outside the workspace that requires it at
// -version: no go.work, no replace lines, the repository's modules from that proxy only.
// Other modules come from the local module cache, else from GOPROXY.
package main
