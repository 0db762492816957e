package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	version := flag.String("version", "", "the version every module is released at, as vX.Y.Z")
	unpublished := flag.String("unpublished", "", "the module directories that are never tagged, separated by spaces")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: releasecheck -version vX.Y.Z [-unpublished 'dir ...'] core-dir [module-dir ...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	c := check{version: *version, dirs: flag.Args(), unpublished: strings.Fields(*unpublished), out: os.Stdout}
	if err := c.run("."); err != nil {
		fmt.Fprintln(os.Stderr, "release-check:", err)
		os.Exit(1)
	}
}
