#!/usr/bin/env bash
# Fake hosts for multi-host runs on one Linux machine: a network namespace
# per host, joined by veth pairs to a bridge, each with its own OpenSSH
# server on throw-away keys, and an ssh_config and hosts.yaml that drive
# them as threadlab drives real hosts (threadlab run --hosts DIR/hosts.yaml).
#
#   scripts/netns-hosts.sh up DIR [NAME[:nojdk]...]   default: target load1 load2 svc
#   scripts/netns-hosts.sh down DIR
#
# Names decide roles in DIR/hosts.yaml: target* is the target, load* the
# load generators, svc* the downstream, db* the database; others are hosts
# for tests to use. NAME:nojdk hides /usr/lib/jvm in that host (a tmpfs
# over it, in a mount namespace of its sshd), for the missing-JDK preflight.
# The namespaces share this machine's file system and processes: only the
# network is separate. tc netem adds NETEM_DELAY (default 250us) on each
# host's side, 0.5 ms round trip between two hosts; a kernel without
# sch_netem skips it with the reason in DIR/netem.txt.
#
# Needs root, iproute2, openssh-server (scripts/setup.sh installs it).
# Exit status 3 means this machine cannot do it (not root, namespaces
# refused, no sshd): the reason is on stderr, and tests skip on it.
# Environment: NETNS_PREFIX (default tl), NETNS_NET (default 10.77.0).
set -euo pipefail

prefix=${NETNS_PREFIX:-tl}
net=${NETNS_NET:-10.77.0}
delay=${NETEM_DELAY:-250us}
bridge="${prefix}br0"

cannot() { echo "netns-hosts: cannot fake hosts here: $*" >&2; exit 3; }

up() {
	local dir=$1; shift
	local names=("$@")
	[ ${#names[@]} -gt 0 ] || names=(target load1 load2 svc)
	[ "$(id -u)" -eq 0 ] || cannot "not root (network namespaces and sshd need root; run as root or skip)"
	command -v ip >/dev/null || cannot "no ip (install iproute2)"
	[ -x /usr/sbin/sshd ] || cannot "no /usr/sbin/sshd (install openssh-server; scripts/setup.sh does)"
	command -v ssh-keygen >/dev/null || cannot "no ssh-keygen (install openssh-client)"
	ip netns add "${prefix}-probe" 2>/dev/null || cannot "the kernel refuses network namespaces (ip netns add failed)"
	ip netns del "${prefix}-probe"
	# Leftovers of a run that was killed before its down (same prefix):
	# their namespaces and bridge would make the new ones collide.
	for spec in "${names[@]}"; do
		local old="${prefix}-${spec%%:*}"
		if ip netns list | grep -qx "$old\( .*\)\?"; then
			echo "netns-hosts: removing the leftover namespace $old" >&2
			for pid in $(ip netns pids "$old" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
			ip netns del "$old" || true
		fi
	done
	ip link show "$bridge" >/dev/null 2>&1 && { echo "netns-hosts: removing the leftover bridge $bridge" >&2; ip link del "$bridge"; }
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	: >"$dir/namespaces"
	mkdir -p /run/sshd && chmod 755 /run/sshd
	rm -f "$dir/id_ed25519" "$dir/id_ed25519.pub" "$dir/hosts.txt"
	ssh-keygen -q -t ed25519 -N '' -C threadlab-netns -f "$dir/id_ed25519"
	cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
	: >"$dir/known_hosts"
	ip link add "$bridge" type bridge
	echo "bridge $bridge" >>"$dir/namespaces"
	ip addr add "$net.1/24" dev "$bridge"
	ip link set "$bridge" up
	# Bridged frames must not meet the host firewall's FORWARD policy.
	if [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" = 1 ]; then
		echo "netns-hosts: bridged frames went through iptables (br_netfilter); setting net.bridge.bridge-nf-call-iptables=0" >&2
		echo 0 >/proc/sys/net/bridge/bridge-nf-call-iptables || true
	fi
	: >"$dir/netem.txt"
	{
		echo "# written by scripts/netns-hosts.sh: throw-away hosts, keys and known_hosts"
		echo "Host ${prefix}-*"
		echo "  User root"
		echo "  IdentityFile $dir/id_ed25519"
		echo "  IdentitiesOnly yes"
		echo "  UserKnownHostsFile $dir/known_hosts"
		echo "  GlobalKnownHostsFile /dev/null"
		echo "  StrictHostKeyChecking yes"
		echo "  BatchMode yes"
		echo "  LogLevel ERROR"
	} >"$dir/ssh_config"
	local i=0 target="" load=() svc="" db=""
	for spec in "${names[@]}"; do
		local name=${spec%%:*} opt=""
		[ "$spec" != "$name" ] && opt=${spec#*:}
		local ns="${prefix}-${name}" addr="$net.$((i + 2))" veth="${prefix}v$i" hd="$dir/$name"
		i=$((i + 1))
		mkdir -p "$hd"
		ip netns add "$ns"
		echo "netns $ns $hd" >>"$dir/namespaces"
		ip link add "$veth" type veth peer name eth0 netns "$ns"
		ip link set "$veth" master "$bridge" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$addr/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$ns" route add default via "$net.1"
		if out=$(ip netns exec "$ns" tc qdisc add dev eth0 root netem delay "$delay" 2>&1); then
			echo "$ns: netem delay $delay" >>"$dir/netem.txt"
		else
			echo "netns-hosts: $ns: no tc netem delay, the hosts are closer than real ones: ${out:-tc failed} (the kernel lacks sch_netem?)" | tee -a "$dir/netem.txt" >&2
		fi
		ssh-keygen -q -t ed25519 -N '' -C "$ns" -f "$hd/ssh_host_ed25519_key"
		cat >"$hd/sshd_config" <<-EOF
			ListenAddress $addr
			Port 22
			HostKey $hd/ssh_host_ed25519_key
			PidFile $hd/sshd.pid
			AuthorizedKeysFile $dir/authorized_keys
			PermitRootLogin prohibit-password
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			UsePAM no
			StrictModes no
			MaxSessions 64
			MaxStartups 64:30:128
			LogLevel ERROR
		EOF
		# Each sshd in a mount namespace of its own where root's ~/.bashrc is
		# empty: a fake host is a fresh machine, not the controller's login.
		# bash sources ~/.bashrc for every ssh command, and this machine's
		# (pyenv init) takes a rehash lock that a kill -9 of a session's
		# process group mid-login leaves behind; every later login then
		# waits out pyenv's 60 s lock timeout, and a CI run with kill -9
		# tests took minutes per remote command.
		nojdk=
		[ "$opt" = nojdk ] && nojdk='mount -t tmpfs tmpfs /usr/lib/jvm && '
		ip netns exec "$ns" unshare --mount --propagation private sh -c \
			'rc=$(getent passwd root | cut -d: -f6)/.bashrc; if [ -f "$rc" ]; then mount --bind /dev/null "$rc" || exit 1; fi; '"$nojdk"'exec env -u JAVA_HOME /usr/sbin/sshd -f "$1" -E "$2"' sh "$hd/sshd_config" "$hd/sshd.log"
		echo "$addr $(cut -d' ' -f1,2 "$hd/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
		printf 'Host %s\n  HostName %s\n' "$ns" "$addr" >>"$dir/ssh_config"
		echo "$name $ns $addr" >>"$dir/hosts.txt"
		case $name in
		target*) [ -n "$target" ] || target="  ssh: $ns\n  address: $addr" ;;
		load*) load+=("  - {ssh: $ns, address: $addr}") ;;
		svc* | downstream*) svc="{ssh: $ns, address: $addr}" ;;
		db*) db="{ssh: $ns, address: $addr}" ;;
		esac
	done
	if [ -n "$target" ] && [ ${#load[@]} -gt 0 ]; then
		{
			echo "# written by scripts/netns-hosts.sh"
			echo "ssh_config: ssh_config"
			printf 'target:\n%b\n' "$target"
			echo "load:"
			printf '%s\n' "${load[@]}"
			[ -z "$svc" ] || echo "downstream: $svc"
			[ -z "$db" ] || echo "database: $db"
		} >"$dir/hosts.yaml"
	fi
	# Wait for every sshd to answer.
	while read -r name ns addr; do
		for _ in $(seq 100); do
			ssh -F "$dir/ssh_config" -o ConnectTimeout=2 "$ns" true 2>/dev/null && continue 2
			sleep 0.1
		done
		echo "netns-hosts: sshd in $ns does not answer; its log:" >&2
		cat "$dir/$name/sshd.log" >&2 || true
		exit 1
	done <"$dir/hosts.txt"
	echo "netns-hosts: ${#names[@]} hosts up: ssh -F $dir/ssh_config ${prefix}-${names[0]%%:*}; inventory $dir/hosts.yaml; down with: $0 down $dir"
}

down() {
	local dir=$1
	[ -f "$dir/namespaces" ] || { echo "netns-hosts: nothing to take down in $dir"; return 0; }
	while read -r kind name hd; do
		case $kind in
		netns)
			# Everything in the namespace: its sshd and whatever a test left.
			for pid in $(ip netns pids "$name" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
			ip netns del "$name" 2>/dev/null || true
			;;
		esac
	done <"$dir/namespaces"
	while read -r kind name _; do
		[ "$kind" = bridge ] && ip link del "$name" 2>/dev/null || true
	done <"$dir/namespaces"
	rm -rf "$dir"
}

case ${1:-} in
up) shift; [ $# -ge 1 ] || { echo "usage: $0 up DIR [NAME[:nojdk]...]" >&2; exit 2; }; up "$@" ;;
down) [ $# -eq 2 ] || { echo "usage: $0 down DIR" >&2; exit 2; }; down "$2" ;;
*) echo "usage: $0 up DIR [NAME[:nojdk]...] | $0 down DIR" >&2; exit 2 ;;
esac
