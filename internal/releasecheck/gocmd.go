package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// execError is a go command that ran and failed.
type execError struct {
	args []string
	err  error
}

func (e *execError) Error() string { return fmt.Sprintf("go %s: %v", strings.Join(e.args, " "), e.err) }

// goCmd runs the go command in dir with env added to the environment, and returns its
// combined output.
func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); ok {
			return out.String(), &execError{args: args, err: err}
		}
		return out.String(), err
	}
	return out.String(), nil
}

// goEnv returns the value of a go env variable.
func goEnv(name string) (string, error) {
	out, err := goCmd(".", nil, "env", name)
	if err != nil {
		return "", fmt.Errorf("go env %s: %v: %s", name, err, out)
	}
	return strings.TrimSpace(out), nil
}
