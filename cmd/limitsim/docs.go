package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
)

// docMarker opens a block of a Markdown file that -docs rewrites: a line
// "<!-- limitsim ARGS -->", then a fenced block that holds what limitsim ARGS
// prints. The tables in the documentation are so the output of the committed
// simulator, and a test checks that they still are.
const (
	docMarker = "<!-- limitsim "
	docEnd    = " -->"
	docFence  = "```"
)

// rewriteDocFile rewrites the blocks of the Markdown file at path.
func rewriteDocFile(ctx context.Context, path string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := rewriteDoc(ctx, doc)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}

// rewriteDoc returns doc with every marked block's fenced output replaced by
// what the simulator prints for the marker's arguments now.
func rewriteDoc(ctx context.Context, doc []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, docMarker) || !strings.HasSuffix(line, docEnd) {
			continue
		}
		args := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, docMarker), docEnd))
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != docFence {
			return nil, fmt.Errorf("line %d: the marker %q is not followed by a fenced block", i+1, line)
		}
		end := i + 2
		for end < len(lines) && strings.TrimSpace(lines[end]) != docFence {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: the block after %q does not end", i+1, line)
		}
		var stdout, stderr bytes.Buffer
		if code := run(ctx, args, &stdout, &stderr); code != 0 {
			return nil, fmt.Errorf("line %d: limitsim %s: exit %d: %s", i+1, strings.Join(args, " "), code, stderr.String())
		}
		out.WriteString(lines[i+1])
		out.Write(stdout.Bytes())
		out.WriteString(lines[end])
		i = end
	}
	return []byte(out.String()), nil
}
