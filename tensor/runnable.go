package tensor

// parseRunnable returns the number before the slash in the fourth
// space-separated field of a /proc/loadavg line, or −1 if there is none.
func parseRunnable(b []byte) int {
	field := 0
	for i := 0; i < len(b); i++ {
		if b[i] == ' ' {
			field++
			continue
		}
		if field == 3 {
			n, j := 0, i
			for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
				n = 10*n + int(b[j]-'0')
			}
			if j == i || j == len(b) || b[j] != '/' {
				return -1
			}
			return n
		}
	}
	return -1
}
