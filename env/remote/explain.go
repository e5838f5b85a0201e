package remote

import (
	"fmt"
	"strings"
)

// explain turns a failed ssh connection into a message naming the host,
// what went wrong and the fix, from ssh's own words on stderr. keyHost is
// the name known_hosts files the host under, for ssh-keygen -R.
func explain(name, dest, keyHost, stderr string, err error) error {
	msg := strings.TrimSpace(stderr)
	low := strings.ToLower(msg)
	last := msg
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		last = strings.TrimSpace(msg[i+1:])
	}
	var what, fix string
	switch {
	case strings.Contains(low, "remote host identification has changed") || strings.Contains(low, "host key for") && strings.Contains(low, "has changed"):
		what = "host key mismatch: the host presents a different key than known_hosts records (a reinstalled host, or someone in between)"
		fix = fmt.Sprintf("verify the new key out of band, then remove the old one with ssh-keygen -R %s and connect once with ssh %s to accept the new one", Quote(keyHost), Quote(dest))
	case strings.Contains(low, "no matching host key") || strings.Contains(low, "host key verification failed"):
		what = "host key not trusted: it is not in known_hosts, and threadlab never answers ssh's prompt (BatchMode)"
		fix = fmt.Sprintf("connect once with ssh %s, check the key's fingerprint and accept it (or add it to known_hosts)", Quote(dest))
	case strings.Contains(low, "permission denied"):
		what = "the key was refused (" + last + ")"
		fix = fmt.Sprintf("install your public key on the host (ssh-copy-id %s), or name the key with IdentityFile in ~/.ssh/config; threadlab runs ssh with BatchMode=yes and never types a password", Quote(dest))
	case strings.Contains(low, "could not resolve hostname") || strings.Contains(low, "name or service not known"):
		what = "unreachable: the host name does not resolve (" + last + ")"
		fix = "correct the destination in hosts.yaml, or give it a HostName in ~/.ssh/config"
	case strings.Contains(low, "connection refused"), strings.Contains(low, "timed out"), strings.Contains(low, "no route to host"),
		strings.Contains(low, "network is unreachable"), strings.Contains(low, "connection closed"), strings.Contains(low, "connection reset"):
		what = "unreachable (" + last + ")"
		fix = fmt.Sprintf("check that the host is up, that sshd listens on the port ssh uses, and that `ssh %s true` works from this machine", Quote(dest))
	default:
		what = fmt.Sprintf("ssh failed (%v)", err)
		if msg != "" {
			what += ": " + last
		}
		fix = fmt.Sprintf("run `ssh -v %s true` to see why", Quote(dest))
	}
	return &HostError{Host: name, What: what, Fix: fix, Stderr: msg}
}

// HostError is a host that cannot take part in a run.
type HostError struct {
	Host   string // role and destination
	What   string
	Fix    string
	Stderr string // ssh's own words
}

func (e *HostError) Error() string {
	return fmt.Sprintf("host %s: %s; fix: %s", e.Host, e.What, e.Fix)
}

// hostOf is the host part of a destination, for ssh-keygen -R.
func hostOf(dest string) string {
	s := strings.TrimPrefix(dest, "ssh://")
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(dest, "ssh://") {
		if i := strings.LastIndex(s, ":"); i >= 0 && !strings.HasSuffix(s, "]") {
			return "[" + strings.Trim(s[:i], "[]") + "]" + s[i:]
		}
	}
	return s
}
