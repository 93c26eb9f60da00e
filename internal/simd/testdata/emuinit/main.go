// Command emuinit is the init process of scripts/avx512-emu.sh's emulated
// machine: it mounts /dev and /proc, runs each line of /commands in turn
// (NAME=value words first, then the program and its arguments), prints
// "emuinit: exit N" after each, and powers the machine off. Built static
// (CGO_ENABLED=0), it is the only program the initramfs needs.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	for _, m := range []struct{ fs, dir string }{{"devtmpfs", "/dev"}, {"proc", "/proc"}} {
		os.MkdirAll(m.dir, 0o755)
		if err := unix.Mount(m.fs, m.dir, m.fs, 0, ""); err != nil {
			fmt.Println("emuinit: mount", m.dir+":", err)
		}
	}
	os.MkdirAll("/tmp", 0o1777)
	os.Setenv("TMPDIR", "/tmp")
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "flags") {
				fmt.Println("emuinit: cpu", l)
				break
			}
		}
	}
	b, err := os.ReadFile("/commands")
	if err != nil {
		fmt.Println("emuinit:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		words := strings.Fields(line)
		env := os.Environ()
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) == 0 {
			continue
		}
		fmt.Println("emuinit: run", line)
		cmd := exec.Command(words[0], words[1:]...)
		cmd.Env, cmd.Dir = env, "/"
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		code := 0
		if err := cmd.Run(); err != nil {
			code = -1
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			}
			fmt.Println("emuinit:", err)
		}
		fmt.Printf("emuinit: exit %d\n", code)
	}
	// Power-off does not wait for the serial port: drain it first
	// (tcdrain), or the last lines are lost.
	unix.IoctlSetInt(1, unix.TCSBRK, 1)
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
}
