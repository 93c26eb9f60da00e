package preflight

import (
	"fmt"
	"io"

	"headlab/internal/memlimit"
	"headlab/kernels"
	"headlab/train"
)

// Memory refuses a run whose models cannot fit: models models of each
// configuration at once (a group, or the groups of every worker), each
// with the probed evaluation graph when probed, against what this
// process may use and, on a device that says, the device's memory. On
// the CPU the device's memory is the process's. A device that cannot
// tell its memory gets one line on stderr saying it was not checked.
func Memory(stderr io.Writer, dev kernels.Device, configs []train.Config, models int, probed bool) error {
	if err := HostMemory(dev, configs, models, probed); err != nil {
		return err
	}
	return DeviceMemory(stderr, dev, configs, models, probed)
}

// memoryNeed is the estimate for the largest of configs, and how it reads.
func memoryNeed(configs []train.Config, models int, probed bool) (int64, string) {
	var need int64
	for _, c := range configs {
		need = max(need, train.EstimateBytes(c, probed))
	}
	parts := "weights, gradients, Adam state and activations"
	if probed {
		parts = "weights, gradients, Adam state, activations and the measurements' probed graph"
	}
	what := fmt.Sprintf("%d models of about %s each (%s)", models, mib(need), parts)
	if models == 1 {
		what = fmt.Sprintf("about %s (%s)", mib(need), parts)
	}
	return need, what
}

// HostMemory is Memory's half for the process's own memory, made before
// anything is built (train.GroupLimit builds one model).
func HostMemory(dev kernels.Device, configs []train.Config, models int, probed bool) error {
	need, what := memoryNeed(configs, models, probed)
	// On a GPU the host still builds one model to size the groups.
	host := need
	if _, onDevice := dev.(kernels.Capacity); !onDevice {
		host = need * int64(models)
	}
	if lim := memlimit.Read(); lim.Known() && host > lim.Bytes {
		return Refusef("the run needs %s, more than the %s this process may use (%s)", what, memlimit.GiB(lim.Bytes), lim.What)
	}
	return nil
}

// DeviceMemory is Memory's half for a device with memory of its own (GL).
func DeviceMemory(stderr io.Writer, dev kernels.Device, configs []train.Config, models int, probed bool) error {
	cp, onDevice := dev.(kernels.Capacity)
	if !onDevice {
		return nil
	}
	need, what := memoryNeed(configs, models, probed)
	mem, ok := cp.MemoryBytes()
	if !ok {
		fmt.Fprintf(stderr, "headlab: %s reports no memory size (its driver has neither GL_NVX_gpu_memory_info nor GL_ATI_meminfo), so whether the run's %d model(s) of about %s fit is not checked\n", dev.Name(), models, mib(need))
		return nil
	}
	if total := need * int64(models); total > mem {
		return Refusef("the run needs %s on %s, more than its %s", what, dev.Name(), memlimit.GiB(mem))
	}
	return nil
}

func mib(b int64) string {
	if b >= 1<<30 {
		return memlimit.GiB(b)
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
