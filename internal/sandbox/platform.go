package sandbox

// PlatformLine is the line tiny-go prints at start on goos to say what is
// weaker there than on Linux; "" on Linux. confined says whether commands
// run under the system's sandbox (Sandbox.Confined). It is portable so
// Linux tests can read the macOS text.
func PlatformLine(goos string, confined bool) string {
	if goos == "linux" {
		return ""
	}
	name := goos
	if goos == "darwin" {
		name = "macOS"
	}
	how := "commands are not confined (--sandbox off, or no sandbox-exec)"
	if confined {
		how = "Seatbelt (sandbox-exec) confines commands' writes and, with --network off, all IP traffic"
	}
	return "tiny-go: on " + name + " there is less protection than on Linux: no overlay transaction " +
		"(checkpoints scan the whole working directory before and after each command), " +
		"no namespaces (commands see your processes, and what they leave running can outlive a killed tiny-go); " + how
}
