package kubernetes

import "strconv"

// bytesQuantity writes n bytes as the API server writes a binary-SI
// quantity: under 1024 in decimal-SI form ("1k", "999"); else with the
// largest power-of-1024 suffix (Ki … Ei) that divides it, or as a plain
// number when none does.
func bytesQuantity(n int64) string {
	if n > -1024 && n < 1024 {
		return decimalQuantity(n, 0)
	}
	for _, s := range []struct {
		shift uint
		name  string
	}{{60, "Ei"}, {50, "Pi"}, {40, "Ti"}, {30, "Gi"}, {20, "Mi"}, {10, "Ki"}} {
		if n%(1<<s.shift) == 0 {
			return strconv.FormatInt(n>>s.shift, 10) + s.name
		}
	}
	return strconv.FormatInt(n, 10)
}

// milliQuantity writes m thousandths (cpu) as a decimal-SI quantity:
// "1500m", "2", "1k".
func milliQuantity(m int64) string {
	if m%1000 != 0 {
		return strconv.FormatInt(m, 10) + "m"
	}
	return decimalQuantity(m/1000, 0)
}

// decimalQuantity writes n×1000^exp with the largest decimal suffix whose
// power of 1000 divides it.
func decimalQuantity(n int64, exp int) string {
	suffix := []string{"", "k", "M", "G", "T", "P", "E"}
	for n != 0 && n%1000 == 0 && exp < len(suffix)-1 {
		n /= 1000
		exp++
	}
	return strconv.FormatInt(n, 10) + suffix[exp]
}
