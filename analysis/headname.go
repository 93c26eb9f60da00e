package analysis

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// HeadName is the name of head h of layer l, "L<layer>H<head>": HeadName(1, 0)
// is "L1H0". Every head name headlab prints is written by it.
func HeadName(l, h int) string { return fmt.Sprintf("L%dH%d", l, h) }

var headNameRE = regexp.MustCompile(`^L(\d+)H(\d+)$`)

// ParseHead reads one head's name as HeadName writes it, in either case
// ("L1H0", "l1h0"), into its layer and head.
func ParseHead(name string) (l, h int, err error) {
	m := headNameRE.FindStringSubmatch(strings.ToUpper(name))
	if m == nil {
		return 0, 0, fmt.Errorf("head %q: want names like L0H1", name)
	}
	// The digits always parse; a number too large for an int saturates,
	// which names a head no model has.
	l, _ = strconv.Atoi(m[1])
	h, _ = strconv.Atoi(m[2])
	return l, h, nil
}

// ParseHeads reads a comma-separated list of head names such as
// "L0H0,L1H1" (spaces around a name and empty items are ignored) into a
// mask, off[l][h], for a model of the given number of layers and heads per
// layer. It is what --ablate accepts.
func ParseHeads(list string, layers, heads int) (Mask, error) {
	off := NewMask(layers, heads, nil)
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		l, h, err := ParseHead(name)
		if err != nil {
			return nil, err
		}
		if l >= layers || h >= heads {
			return nil, fmt.Errorf("head %s does not exist: the model has %d layers of %d heads", name, layers, heads)
		}
		off[l][h] = true
	}
	return off, nil
}

// HeadNames lists the names of the heads set in off, layer by layer: the
// inverse of ParseHeads. It is empty, not nil, when no head is set.
func HeadNames(off [][]bool) []string {
	names := []string{}
	for l, row := range off {
		for h, o := range row {
			if o {
				names = append(names, HeadName(l, h))
			}
		}
	}
	return names
}
