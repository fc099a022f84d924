//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's network rules govern TCP sockets only (IPPROTO_TCP). Two
// other stream protocols connect to an ordinary TCP listener by falling
// back to plain TCP: MPTCP (IPPROTO_MPTCP) and SMC (AF_SMC, or
// IPPROTO_SMC). So that --network off denies TCP connections in every
// spelling, the supervisor of a confined command adds a seccomp filter
// that fails socket(2) with EACCES for those, and io_uring_setup(2) with
// ENOSYS (an io_uring can create sockets without socket(2)). TCP Fast
// Open connects a plain TCP socket from sendto(2), sendmsg(2) or
// sendmmsg(2) with MSG_FASTOPEN, never calling connect(2), which is where
// Landlock checks (found open by TestAttackVariantNetworkOffFastOpen on
// Linux 6.18): the filter fails those calls with that flag with EACCES.

// Protocols and families that reach a TCP listener without being TCP
// sockets to Landlock.
const (
	ipprotoSMC = 256 // IPPROTO_SMC (Linux 6.11)
	afSMC      = 43  // AF_SMC
)

// isolateNetwork moves the calling thread (which starts the program) into
// a network namespace of its own, with only a loopback interface that is
// down: Landlock denies connect and bind, but listen(2) on a socket never
// bound makes the kernel bind an ephemeral port on every address without
// the bind check (found open by TestAttackVariantNetworkOffListen), and
// in a namespace of its own no one outside can reach it. It needs
// CAP_SYS_ADMIN in the thread's user namespace: reel running as root has
// it, and otherwise Sandbox starts sandbox-exec in a user namespace of its
// own (userNSAttr). Without it the command must not run.
func isolateNetwork() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("making a private network namespace (--network off): %w; --network off needs reel to run as root or unprivileged user namespaces to be enabled", err)
	}
	return nil
}

// seccompArch is what the filter needs to know of the running
// architecture: its audit arch and, for the compat ABI the kernel may run
// beside it, that ABI's audit arch and call numbers (socketcall: 0 when
// the ABI has none).
type seccompArch struct {
	native, compat                 uint32
	compatSocket, compatSocketcall uint32
	// The compat ABI's sendto, sendmsg and sendmmsg.
	compatSendto, compatSendmsg, compatSendmmsg uint32
}

// seccompArchOf returns the architecture of this build, or false when the
// filter does not know it.
func seccompArchOf() (seccompArch, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompArch{native: unix.AUDIT_ARCH_X86_64, compat: unix.AUDIT_ARCH_I386, compatSocket: 359, compatSocketcall: 102, compatSendto: 369, compatSendmsg: 370, compatSendmmsg: 345}, true
	case "arm64":
		return seccompArch{native: unix.AUDIT_ARCH_AARCH64, compat: unix.AUDIT_ARCH_ARM, compatSocket: 281, compatSendto: 290, compatSendmsg: 296, compatSendmmsg: 374}, true
	}
	return seccompArch{}, false
}

// bpfInsn is one classic BPF instruction with symbolic jump targets.
type bpfInsn struct {
	code   uint16
	k      uint32
	jt, jf string // labels; "" is the next instruction
	label  string // this instruction's label
}

// assemble resolves the labels of prog into a filter.
func assemble(prog []bpfInsn) ([]unix.SockFilter, error) {
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	off := func(i int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		j, ok := at[label]
		if !ok || j <= i || j-i-1 > 255 {
			return 0, fmt.Errorf("seccomp filter: bad jump to %q from %d", label, i)
		}
		return uint8(j - i - 1), nil
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		jt, err := off(i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := off(i, in.jf)
		if err != nil {
			return nil, err
		}
		out[i] = unix.SockFilter{Code: in.code, Jt: jt, Jf: jf, K: in.k}
	}
	return out, nil
}

// tcpBypassFilter is the filter for arch (see the top of this file).
func tcpBypassFilter(arch seccompArch) ([]unix.SockFilter, error) {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data; an argument's low 32 bits on a
		// little-endian machine (the kernel reads socket's int arguments
		// from them).
		offNr, offArch, offArg0, offArg2, offArg3 = 0, 4, 16, 32, 40
		x32Bit                                    = 0x40000000
	)
	compatSocketcall := arch.compatSocketcall
	if compatSocketcall == 0 {
		compatSocketcall = ^uint32(0) // no such call: never matches
	}
	return assemble([]bpfInsn{
		{code: ld, k: offArch},
		{code: jeq, k: arch.native, jt: "native"},
		{code: jeq, k: arch.compat, jt: "compat", jf: "enosys"},
		{label: "native", code: ld, k: offNr},
		{code: jge, k: x32Bit, jt: "enosys"},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "enosys"},
		{code: jeq, k: unix.SYS_SENDTO, jt: "flags3"},
		{code: jeq, k: unix.SYS_SENDMSG, jt: "flags2"},
		{code: jeq, k: unix.SYS_SENDMMSG, jt: "flags3"},
		{code: jeq, k: unix.SYS_SOCKET, jt: "socket", jf: "allow"},
		{label: "compat", code: ld, k: offNr},
		{code: jeq, k: unix.SYS_IO_URING_SETUP, jt: "enosys"},
		// socketcall hides its arguments behind a pointer.
		{code: jeq, k: compatSocketcall, jt: "eacces"},
		{code: jeq, k: arch.compatSendto, jt: "flags3"},
		{code: jeq, k: arch.compatSendmsg, jt: "flags2"},
		{code: jeq, k: arch.compatSendmmsg, jt: "flags3"},
		{code: jeq, k: arch.compatSocket, jt: "socket", jf: "allow"},
		{label: "socket", code: ld, k: offArg0},
		{code: jeq, k: afSMC, jt: "eacces"},
		{code: ld, k: offArg2},
		{code: jeq, k: unix.IPPROTO_MPTCP, jt: "eacces"},
		{code: jeq, k: ipprotoSMC, jt: "eacces", jf: "allow"},
		// TCP Fast Open: sendto and sendmmsg (flags in argument 3) and
		// sendmsg (argument 2) with MSG_FASTOPEN connect a TCP socket
		// without connect(2), where Landlock's check is.
		{label: "flags2", code: ld, k: offArg2},
		{code: jset, k: unix.MSG_FASTOPEN, jt: "eacces", jf: "allow"},
		{label: "flags3", code: ld, k: offArg3},
		{code: jset, k: unix.MSG_FASTOPEN, jt: "eacces", jf: "allow"},
		{label: "allow", code: ret, k: unix.SECCOMP_RET_ALLOW},
		{label: "eacces", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{label: "enosys", code: ret, k: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
	})
}

// denyTCPBypass installs the filter on every thread of the process; what
// it starts afterwards inherits it. It needs no_new_privs, which Landlock
// already set.
func denyTCPBypass() error {
	arch, ok := seccompArchOf()
	if !ok {
		return fmt.Errorf("--network off: no seccomp filter for %s: MPTCP and SMC sockets could reach TCP listeners", runtime.GOARCH)
	}
	filter, err := tcpBypassFilter(arch)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&prog)))
	switch {
	case errno != 0:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	case r != 0:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): thread %d could not be synchronized", r)
	}
	runtime.KeepAlive(filter)
	return nil
}
