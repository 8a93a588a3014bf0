package guest

// EnvRole names the role a sandbox backend re-executes the running binary
// (fullsend, or a test binary) as: the local backend's init, supervisor,
// per-exec pid 1, enter step, archive helper and user namespace holder,
// and the docker backend's confine wrapper. Package reexec reads it first
// thing in main and calls Run.
const EnvRole = "FULLSEND_SANDBOX_ROLE"
