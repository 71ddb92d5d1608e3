# The namespace init of nsinit.go, for linux/amd64, as a static program of
# a few hundred bytes: starting it costs a fraction of a Go program's
# start (the runtime alone takes milliseconds). Same arguments, same steps,
# same failure status (125, or 126/127 when the command cannot be run).
# Assembled with GNU as and ld by gen.sh into ../elf_amd64.go.
#
#   argv: <argv0> <fd digit>[u] [<uid map> <gid map>] <state dir or ""> <path> <argv of the command...>
#   argv: <argv0> <fd digit>[u]o<rights> [<uid map> <gid map>] <state dir or ""> <lower> <overlay options> <work> <path> <argv...>
#   argv: <argv0> <fd digit>[u]j [<uid map> <gid map>] <state dir or ""> <path> <argv of the command...>
#
# With u, the init first writes its own id maps (after denying setgroups):
# tiny-go is non-dumpable and may not. The o form mounts an overlay over
# <lower> (the working directory), with the state directory's mount cloned
# before it and moved on top of it after, read-only (nsinit.go, runOverlay,
# says why), and adds a rule granting <rights> (decimal, 0: none) beneath
# the overlay to the ruleset: the working directory's rule is hidden by it.
# Right after the mount it makes <work>/work, and work/incompat/volatile
# and its file dirty (a volatile overlay's), which the kernel makes with
# mode 000, 0700 (a missing one skipped), through <work> opened
# before (the path may lie beneath the overlay now): the command, without
# CAP_DAC_OVERRIDE, would fail to walk the tree through the state
# directory (find, grep -r).
#
# <fd digit> (3 to 8) is the Landlock ruleset; the next descriptor holds
# the seccomp filter (struct sock_filter[], empty for none).
#
# The j form (nsinit.JournalForm: the command journaled on the tree
# itself) binds the working directory over itself nosuid and nodev, and
# after the sandbox's filter installs the journal's, from the descriptor
# after it, with a listener of its own that it sends to tiny-go over the
# socket after that; the command never holds either.

	.equ SYS_write, 1
	.equ SYS_pread64, 17
	.equ SYS_capset, 126
	.equ SYS_seccomp, 317
	.equ SYS_sendmsg, 46
	.equ SYS_open, 2
	.equ SYS_stat, 4
	.equ S_IFMT, 0xf000
	.equ S_IFDIR, 0x4000
	.equ SYS_close, 3
	.equ SYS_execve, 59
	.equ SYS_getcwd, 79
	.equ SYS_chdir, 80
	.equ SYS_fchmodat, 268
	.equ SYS_statfs, 137
	.equ SYS_prctl, 157
	.equ SYS_mount, 165
	.equ SYS_exit_group, 231
	.equ SYS_landlock_add_rule, 445
	.equ SYS_landlock_restrict_self, 446
	.equ LANDLOCK_RULE_PATH_BENEATH, 1
	.equ SYS_open_tree, 428
	.equ SYS_move_mount, 429

	.equ AT_FDCWD, -100
	.equ OPEN_TREE_CLONE, 1
	.equ O_WRONLY, 1
	.equ O_DIRECTORY, 0x10000
	.equ O_CLOEXEC, 0x80000
	.equ O_PATH, 0x200000
	.equ MOVE_MOUNT_F_EMPTY_PATH, 4

	.equ MS_RDONLY, 1
	.equ MS_NOSUID, 2
	.equ MS_NODEV, 4
	.equ MS_NOEXEC, 8
	.equ MS_REMOUNT, 32
	.equ MS_NOATIME, 1024
	.equ MS_NODIRATIME, 2048
	.equ MS_BIND, 4096
	.equ MS_REC, 16384
	.equ MS_SLAVE, 1<<19
	.equ MS_RELATIME, 1<<21
	.equ ST_RELATIME, 4096

	.equ PR_CAPBSET_DROP, 24
	.equ PR_SET_SECUREBITS, 28
	.equ SECUREBITS, 0xef		# nsinit.Securebits
	.equ LINUX_CAPABILITY_VERSION_3, 0x20080522
	.equ SECCOMP_SET_MODE_FILTER, 1
	.equ SECCOMP_FILTER_FLAG_NEW_LISTENER, 8
	.equ SOL_SOCKET, 1
	.equ SCM_RIGHTS, 1
	.equ EINVAL, 22
	.equ PR_SET_NO_NEW_PRIVS, 38
	.equ PR_CAP_AMBIENT, 47
	.equ PR_CAP_AMBIENT_CLEAR_ALL, 4

	.text
	.globl _start
_start:
	mov	(%rsp), %rbx			# argc
	lea	8(%rsp), %r12			# argv
	lea	16(%rsp,%rbx,8), %r13		# envp
	lea	msg_args(%rip), %rsi
	mov	$len_args, %edx
	cmp	$5, %rbx
	jb	fail
	mov	8(%r12), %rax			# the ruleset descriptor, one digit
	movzbl	(%rax), %r14d
	sub	$'0', %r14d
	cmp	$3, %r14d
	jb	fail
	cmp	$8, %r14d			# the seccomp filter is the next descriptor
	ja	fail
	lea	1(%rax), %r15			# the rest of the flags
	cmpb	$'u', (%r15)
	jne	0f
	cmp	$7, %rbx
	jb	fail
	inc	%r15
	call	idmaps
	add	$16, %r12			# past the maps: the rest as without them
	sub	$2, %rbx
	lea	msg_args(%rip), %rsi
	mov	$len_args, %edx
0:	xor	%ecx, %ecx			# 1: the overlay form, 2: the journal form
	xor	%ebp, %ebp			# the overlay's rights
	cmpb	$'j', (%r15)
	jne	6f
	inc	%r15				# j ends the flags (no journal over an overlay)
	mov	$2, %ecx
	jmp	2f
6:	cmpb	$'o', (%r15)
	jne	2f
1:	inc	%r15
	movzbl	(%r15), %eax
	test	%eax, %eax
	jz	0f
	sub	$'0', %eax
	cmp	$9, %eax
	ja	fail
	imul	$10, %rbp, %rbp
	add	%rax, %rbp
	jmp	1b
0:	cmp	$8, %rbx
	jb	fail
	mov	$1, %ecx
	jmp	3f
2:	cmpb	$0, (%r15)
	jne	fail
3:	lea	24(%r12), %rbx			# the command's path, then its argv
	cmp	$1, %ecx
	jne	0f
	lea	48(%r12), %rbx
0:	sub	$4144, %rsp			# room for statfs and getcwd; 4096: the clone, 4104: the form, 4112: its rights, 4120: <work>, 4128: the form (4104 is the filter's later)
	movq	$-1, 4096(%rsp)
	mov	%rcx, 4104(%rsp)
	mov	%rbp, 4112(%rsp)
	mov	%rcx, 4128(%rsp)

	# Every mount a slave: nothing done here propagates back.
	lea	empty(%rip), %rdi
	lea	slash(%rip), %rsi
	xor	%edx, %edx
	mov	$(MS_REC|MS_SLAVE), %r10d
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	lea	msg_slave(%rip), %rsi
	mov	$len_slave, %edx
	test	%rax, %rax
	jnz	fail

	# A procfs of the new PID namespace.
	lea	proc(%rip), %rdi
	lea	slashproc(%rip), %rsi
	lea	proc(%rip), %rdx
	mov	$(MS_NOSUID|MS_NODEV|MS_NOEXEC), %r10d
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	lea	msg_proc(%rip), %rsi
	mov	$len_proc, %edx
	test	%rax, %rax
	jnz	fail

	mov	16(%r12), %r15
	cmpq	$1, 4104(%rsp)
	je	overlay

	# The state directory, bound over itself read-only, keeping the flags
	# of the mount it is on (a user namespace may not clear them).
	cmpb	$0, (%r15)
	je	afterstate
	call	stateflags
	mov	%r15, %rdi
	mov	%r15, %rsi
	xor	%edx, %edx
	mov	$MS_BIND, %r10d
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	lea	msg_bind(%rip), %rsi
	mov	$len_bind, %edx
	test	%rax, %rax
	jnz	fail
readonly:
	lea	empty(%rip), %rdi
	mov	%r15, %rsi
	xor	%edx, %edx
	mov	%rbp, %r10
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	lea	msg_bind(%rip), %rsi
	mov	$len_bind, %edx
	test	%rax, %rax
	jnz	fail
afterstate:
	cmpq	$2, 4128(%rsp)
	jne	0f
	call	treenodev
0:	call	hide
	# The working directory may lie under the state directory: look it
	# up again, so it is on the read-only mount.
	mov	%rsp, %rdi
	mov	$4096, %esi
	mov	$SYS_getcwd, %eax
	syscall
	test	%rax, %rax
	jle	3f
	mov	%rsp, %rdi
	mov	$SYS_chdir, %eax
	syscall
	lea	msg_cwd(%rip), %rsi
	mov	$len_cwd, %edx
	test	%rax, %rax
	jnz	fail
3:
	# No capability left, none to regain (caps.go): the securebits
	# locked, every capability dropped from the bounding set (EINVAL
	# past the kernel's last one), the ambient ones cleared, and every
	# other set emptied by capset.
	mov	$PR_SET_SECUREBITS, %edi
	mov	$SECUREBITS, %esi
	call	prctl
	xor	%ebp, %ebp
0:	mov	$PR_CAPBSET_DROP, %edi
	mov	%ebp, %esi
	xor	%edx, %edx
	xor	%r10d, %r10d
	xor	%r8d, %r8d
	mov	$SYS_prctl, %eax
	syscall
	cmp	$-EINVAL, %rax
	je	1f
	lea	msg_caps(%rip), %rsi
	mov	$len_caps, %edx
	test	%rax, %rax
	jnz	fail
	inc	%ebp
	cmp	$64, %ebp
	jb	0b
1:	mov	$PR_CAP_AMBIENT, %edi
	mov	$PR_CAP_AMBIENT_CLEAR_ALL, %esi
	call	prctl
	movl	$LINUX_CAPABILITY_VERSION_3, 4096(%rsp)	# the header: version, pid 0
	movl	$0, 4100(%rsp)
	movq	$0, (%rsp)			# two struct __user_cap_data, zero
	movq	$0, 8(%rsp)
	movq	$0, 16(%rsp)
	lea	4096(%rsp), %rdi
	mov	%rsp, %rsi
	mov	$SYS_capset, %eax
	syscall
	lea	msg_caps(%rip), %rsi
	mov	$len_caps, %edx
	test	%rax, %rax
	jnz	fail
	mov	$PR_SET_NO_NEW_PRIVS, %edi
	mov	$1, %esi
	call	prctl

	# Landlock.
	mov	%r14, %rdi
	xor	%esi, %esi
	mov	$SYS_landlock_restrict_self, %eax
	syscall
	lea	msg_landlock(%rip), %rsi
	mov	$len_landlock, %edx
	test	%rax, %rax
	jnz	fail
	mov	%r14, %rdi
	mov	$SYS_close, %eax
	syscall

	# The seccomp filter from the next descriptor, at most 4095 bytes
	# (sock_fprog: the count at 4096, the address at 4104), then the
	# command.
	lea	1(%r14), %rdi
	mov	%rsp, %rsi
	mov	$4096, %edx
	xor	%r10d, %r10d
	mov	$SYS_pread64, %eax
	syscall
	lea	msg_seccomp(%rip), %rsi
	mov	$len_seccomp, %edx
	test	%rax, %rax
	js	fail
	jz	5f				# no filter for this architecture
	cmp	$4096, %rax
	jae	fail
	test	$7, %al
	jnz	fail
	shr	$3, %rax
	mov	%ax, 4096(%rsp)
	mov	%rsp, 4104(%rsp)
	mov	$SECCOMP_SET_MODE_FILTER, %edi
	xor	%esi, %esi
	lea	4096(%rsp), %rdx
	mov	$SYS_seccomp, %eax
	syscall
	lea	msg_seccomp(%rip), %rsi
	mov	$len_seccomp, %edx
	test	%rax, %rax
	jnz	fail
5:	lea	1(%r14), %rdi
	mov	$SYS_close, %eax
	syscall
	cmpq	$2, 4128(%rsp)
	jne	6f
	call	journal
6:	mov	(%rbx), %rdi
	lea	8(%rbx), %rsi
	mov	%r13, %rdx
	mov	$SYS_execve, %eax
	syscall
	mov	$126, %ebx
	cmp	$-2, %rax			# ENOENT
	jne	4f
	mov	$127, %ebx
4:	lea	msg_exec(%rip), %rsi
	mov	$len_exec, %edx
	mov	$2, %edi
	mov	$SYS_write, %eax
	syscall
	mov	%ebx, %edi
	mov	$SYS_exit_group, %eax
	syscall

# The overlay form: the state directory's mount cloned, the overlay
# mounted over the working directory, the clone moved on top, read-only.
overlay:
	cmpb	$0, (%r15)
	je	1f
	mov	$AT_FDCWD, %edi
	mov	%r15, %rsi
	mov	$(OPEN_TREE_CLONE|O_CLOEXEC), %edx
	mov	$SYS_open_tree, %eax
	syscall
	lea	msg_overlay(%rip), %rsi
	mov	$len_overlay, %edx
	test	%rax, %rax
	js	fail
	mov	%rax, 4096(%rsp)
1:	mov	40(%r12), %rdi			# <work>, opened before the overlay hides it
	mov	$(O_PATH|O_DIRECTORY|O_CLOEXEC), %esi
	mov	$SYS_open, %eax
	syscall
	lea	msg_work(%rip), %rsi
	mov	$len_work, %edx
	test	%rax, %rax
	js	fail
	mov	%rax, 4120(%rsp)
	lea	ovl(%rip), %rdi
	mov	24(%r12), %rsi
	lea	ovl(%rip), %rdx
	mov	$(MS_NOSUID|MS_NODEV), %r10d
	mov	32(%r12), %r8
	mov	$SYS_mount, %eax
	syscall
	lea	msg_overlay(%rip), %rsi
	mov	$len_overlay, %edx
	test	%rax, %rax
	jnz	fail
	lea	workdirs(%rip), %rsi		# readable by their owner
0:	mov	4120(%rsp), %rdi
	mov	$0700, %edx
	mov	$SYS_fchmodat, %eax
	push	%rsi
	syscall
	pop	%rsi
	cmp	$-2, %rax			# ENOENT
	je	1f
	test	%rax, %rax
	jnz	2f
1:	cmpb	$0, (%rsi)			# the next name
	lea	1(%rsi), %rsi
	jne	1b
	cmpb	$0, (%rsi)			# an empty one ends the list
	jne	0b
	jmp	3f
2:	lea	msg_work(%rip), %rsi
	mov	$len_work, %edx
	jmp	fail
3:	mov	4120(%rsp), %rdi
	mov	$SYS_close, %eax
	syscall
	cmpq	$0, 4112(%rsp)
	je	1f
	call	allowoverlay
1:	cmpb	$0, (%r15)
	je	afterstate
	mov	4096(%rsp), %rdi
	lea	empty(%rip), %rsi
	mov	$AT_FDCWD, %edx
	mov	%r15, %r10
	mov	$MOVE_MOUNT_F_EMPTY_PATH, %r8d
	mov	$SYS_move_mount, %eax
	syscall
	lea	msg_bind(%rip), %rsi
	mov	$len_bind, %edx
	test	%rax, %rax
	jnz	fail
	mov	4096(%rsp), %rdi
	mov	$SYS_close, %eax
	syscall
	call	stateflags
	jmp	readonly

# hide: covers each path listed, one a line, in the environment's
# TINY_GO_NSINIT_HIDE (nsinit.HideEnv), as the Go init does: a directory
# by an empty read-only tmpfs, anything else by a bind mount of /dev/null;
# a path that does not exist is skipped, one that cannot be covered fails
# the init. The variable is taken out of the environment (r13) the
# command gets. The frame of _start (F, 4096 bytes) is free here: with
# the return address and two registers pushed, F is 24(%rsp); the stat
# buffer is F+0, the path F+256 (at most 3799 bytes and its NUL).
hide:
	push	%rbp
	push	%rbx
	mov	%r13, %rbx			# the environment slot read
	mov	%r13, %rbp			# the slot written
0:	mov	(%rbx), %rsi
	test	%rsi, %rsi
	jz	9f
	add	$8, %rbx
	lea	hideenv(%rip), %rdi
1:	movzbl	(%rdi), %eax
	test	%eax, %eax
	jz	2f				# the whole name matched
	cmpb	%al, (%rsi)
	jne	8f
	inc	%rdi
	inc	%rsi
	jmp	1b
8:	mov	-8(%rbx), %rax			# kept: its pointer moves down
	mov	%rax, (%rbp)
	add	$8, %rbp
	jmp	0b
2:	mov	%rsi, %r9			# the list, one path a line
3:	lea	280(%rsp), %rdi
	xor	%ecx, %ecx
4:	movzbl	(%r9), %eax
	test	%eax, %eax
	jz	5f
	inc	%r9
	cmp	$'\n', %eax
	je	5f
	cmp	$3799, %ecx
	jae	7f
	mov	%al, (%rdi,%rcx)
	inc	%ecx
	jmp	4b
5:	movb	$0, (%rdi,%rcx)
	test	%ecx, %ecx
	jz	6f
	lea	24(%rsp), %rsi
	mov	$SYS_stat, %eax
	syscall
	test	%rax, %rax
	jnz	6f				# missing (or unreachable): skipped
	lea	280(%rsp), %rsi
	mov	48(%rsp), %eax			# st_mode
	and	$S_IFMT, %eax
	cmp	$S_IFDIR, %eax
	jne	1f
	lea	tmpfs(%rip), %rdi
	lea	tmpfs(%rip), %rdx
	mov	$(MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC), %r10d
	lea	tmpfsopts(%rip), %r8
	jmp	2f
1:	lea	devnull(%rip), %rdi
	lea	empty(%rip), %rdx
	mov	$MS_BIND, %r10d
	lea	empty(%rip), %r8
2:	mov	$SYS_mount, %eax
	syscall
	test	%rax, %rax
	jnz	7f
6:	cmpb	$0, (%r9)
	jne	3b
	jmp	0b
7:	lea	msg_hide(%rip), %rsi
	mov	$len_hide, %edx
	jmp	fail
9:	movq	$0, (%rbp)
	pop	%rbx
	pop	%rbp
	ret

# allowoverlay: adds to the ruleset (r14) a rule granting the rights at
# 4112 of the frame beneath <lower>, the overlay's root now.
allowoverlay:
	mov	24(%r12), %rdi
	mov	$(O_PATH|O_DIRECTORY|O_CLOEXEC), %esi
	mov	$SYS_open, %eax
	syscall
	lea	msg_rule(%rip), %rsi
	mov	$len_rule, %edx
	test	%rax, %rax
	js	fail
	mov	%rax, %rbp
	mov	4120(%rsp), %rcx		# the rights (the frame is 8 bytes up)
	mov	%rcx, 8(%rsp)			# struct landlock_path_beneath_attr
	mov	%eax, 16(%rsp)
	mov	%r14, %rdi
	mov	$LANDLOCK_RULE_PATH_BENEATH, %esi
	lea	8(%rsp), %rdx
	xor	%r10d, %r10d
	mov	$SYS_landlock_add_rule, %eax
	syscall
	lea	msg_rule(%rip), %rsi
	mov	$len_rule, %edx
	test	%rax, %rax
	jnz	fail
	mov	%rbp, %rdi
	mov	$SYS_close, %eax
	syscall
	ret

# treenodev: the journal form's working directory, bound over itself
# nosuid and nodev (a device node planted in the tree must not open: the
# overlay is mounted so), keeping the flags of its mount a user namespace
# may not clear, then entered again. The frame F is 8(%rsp): statfs at
# F+0, the path at F+256.
treenodev:
	lea	264(%rsp), %rdi
	mov	$3800, %esi
	mov	$SYS_getcwd, %eax
	syscall
	lea	msg_tree(%rip), %rsi
	mov	$len_tree, %edx
	test	%rax, %rax
	jle	fail
	lea	264(%rsp), %rdi
	mov	%rdi, %rsi
	xor	%edx, %edx
	mov	$(MS_BIND|MS_REC), %r10d
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	test	%rax, %rax
	jnz	1f
	lea	264(%rsp), %rdi
	lea	8(%rsp), %rsi
	call	mountflags
	test	%rax, %rax
	jnz	1f
	mov	%rbp, %r10
	lea	empty(%rip), %rdi
	lea	264(%rsp), %rsi
	xor	%edx, %edx
	xor	%r8d, %r8d
	mov	$SYS_mount, %eax
	syscall
	test	%rax, %rax
	jnz	1f
	lea	264(%rsp), %rdi
	mov	$SYS_chdir, %eax
	syscall
	test	%rax, %rax
	jnz	1f
	ret
1:	lea	msg_tree(%rip), %rsi
	mov	$len_tree, %edx
	jmp	fail

# journal: the journal's filter, from the ruleset's descriptor + 2 (at
# most 4095 bytes; the sandbox's filter is on and closed), installed with
# a listener of its own, which goes to tiny-go over the socket at + 3 as
# SCM_RIGHTS with one byte; then the three are closed. The frame F is
# 8(%rsp): the program at F+0 and sock_fprog at F+4096, then the iovec
# at F+0, the byte at F+64, the cmsghdr at F+72, the msghdr at F+128.
journal:
	lea	2(%r14), %rdi
	lea	8(%rsp), %rsi
	mov	$4096, %edx
	xor	%r10d, %r10d
	mov	$SYS_pread64, %eax
	syscall
	lea	msg_journal(%rip), %rsi
	mov	$len_journal, %edx
	test	%rax, %rax
	jle	fail
	cmp	$4096, %rax
	jae	fail
	test	$7, %al
	jnz	fail
	shr	$3, %rax
	mov	%ax, 4104(%rsp)
	lea	8(%rsp), %rcx
	mov	%rcx, 4112(%rsp)
	lea	2(%r14), %rdi
	mov	$SYS_close, %eax
	syscall
	mov	$SECCOMP_SET_MODE_FILTER, %edi
	mov	$SECCOMP_FILTER_FLAG_NEW_LISTENER, %esi
	lea	4104(%rsp), %rdx
	mov	$SYS_seccomp, %eax
	syscall
	lea	msg_journal(%rip), %rsi
	mov	$len_journal, %edx
	test	%rax, %rax
	js	fail
	mov	%rax, %rbp			# the listener
	lea	72(%rsp), %rcx
	movb	$0, (%rcx)
	mov	%rcx, 8(%rsp)			# iov_base
	movq	$1, 16(%rsp)			# iov_len
	movq	$20, 80(%rsp)			# cmsg_len: CMSG_LEN(4)
	movl	$SOL_SOCKET, 88(%rsp)
	movl	$SCM_RIGHTS, 92(%rsp)
	mov	%ebp, 96(%rsp)
	movl	$0, 100(%rsp)
	movq	$0, 136(%rsp)			# msg_name
	movq	$0, 144(%rsp)			# msg_namelen
	lea	8(%rsp), %rcx
	mov	%rcx, 152(%rsp)			# msg_iov
	movq	$1, 160(%rsp)			# msg_iovlen
	lea	80(%rsp), %rcx
	mov	%rcx, 168(%rsp)			# msg_control
	movq	$24, 176(%rsp)			# msg_controllen: CMSG_SPACE(4)
	movq	$0, 184(%rsp)			# msg_flags
	lea	3(%r14), %rdi
	lea	136(%rsp), %rsi
	xor	%edx, %edx
	mov	$SYS_sendmsg, %eax
	syscall
	lea	msg_listener(%rip), %rsi
	mov	$len_listener, %edx
	cmp	$1, %rax
	jne	fail
	mov	%rbp, %rdi
	mov	$SYS_close, %eax
	syscall
	lea	3(%r14), %rdi
	mov	$SYS_close, %eax
	syscall
	ret

# idmaps: denies setgroups, then writes argv[2] to the uid map and argv[3]
# to the gid map of this process's user namespace (r12: argv).
idmaps:
	lea	setgroups(%rip), %rdi
	lea	deny(%rip), %rsi
	call	writefile
	lea	uidmap(%rip), %rdi
	mov	16(%r12), %rsi
	call	writefile
	lea	gidmap(%rip), %rdi
	mov	24(%r12), %rsi
	call	writefile
	ret

# writefile: writes the string at rsi to the file at rdi; fails the init
# on an error.
writefile:
	push	%rsi
	mov	$(O_WRONLY|O_CLOEXEC), %esi
	mov	$SYS_open, %eax
	syscall
	pop	%rsi
	test	%rax, %rax
	js	1f
	mov	%rax, %rdi
	xor	%edx, %edx
0:	cmpb	$0, (%rsi,%rdx)
	je	0f
	inc	%rdx
	jmp	0b
0:	mov	$SYS_write, %eax
	syscall
	mov	%rax, %r8
	mov	$SYS_close, %eax
	syscall
	test	%r8, %r8
	js	1f
	ret
1:	lea	msg_idmap(%rip), %rsi
	mov	$len_idmap, %edx
	jmp	fail

# stateflags: rbp = the flags to remount the state directory (r15) with:
# mountflags', and read-only.
stateflags:
	mov	%r15, %rdi
	lea	8(%rsp), %rsi
	call	mountflags
	lea	msg_bind(%rip), %rsi
	mov	$len_bind, %edx
	test	%rax, %rax
	jnz	fail
	or	$MS_RDONLY, %ebp
	ret

# mountflags: rbp = the flags to remount the path at rdi with, bound over
# itself: those of the mount it is on that a user namespace may not clear,
# and bind, remount, nosuid, nodev; its statfs read into the buffer at rsi.
# rax: statfs's result (0, or the error its caller reports).
mountflags:
	mov	%rsi, %rdx			# the syscall keeps rdx, not rcx
	mov	$SYS_statfs, %eax
	syscall
	test	%rax, %rax
	jnz	1f
	mov	80(%rdx), %rcx			# f_flags
	mov	%ecx, %ebp
	and	$(MS_RDONLY|MS_NOEXEC|MS_NOATIME|MS_NODIRATIME), %ebp
	test	$ST_RELATIME, %ecx
	jz	0f
	or	$MS_RELATIME, %ebp
0:	or	$(MS_BIND|MS_REMOUNT|MS_NOSUID|MS_NODEV), %ebp
1:	ret

# prctl(edi, esi, 0, 0, 0); fails the init on an error.
prctl:
	xor	%edx, %edx
	xor	%r10d, %r10d
	xor	%r8d, %r8d
	mov	$SYS_prctl, %eax
	syscall
	lea	msg_caps(%rip), %rsi
	mov	$len_caps, %edx
	test	%rax, %rax
	jnz	fail
	ret

# Writes the message at rsi (rdx bytes) to standard error, exits 125.
fail:
	mov	$2, %edi
	mov	$SYS_write, %eax
	syscall
	mov	$125, %edi
	mov	$SYS_exit_group, %eax
	syscall

	.section .rodata
empty:	.asciz ""
slash:	.asciz "/"
proc:	.asciz "proc"
slashproc: .asciz "/proc"
ovl:	.asciz "overlay"
workdirs: .asciz "work", "work/incompat", "work/incompat/volatile", "work/incompat/volatile/dirty", ""
tmpfs:	.asciz "tmpfs"
tmpfsopts: .asciz "size=4k,mode=0555"
devnull: .asciz "/dev/null"
hideenv: .asciz "TINY_GO_NSINIT_HIDE="
setgroups: .asciz "/proc/self/setgroups"
deny:	.asciz "deny"
uidmap:	.asciz "/proc/self/uid_map"
gidmap:	.asciz "/proc/self/gid_map"
msg_idmap: .ascii "tiny-go: namespace init: writing the user namespace's id maps failed\n"
	.equ len_idmap, . - msg_idmap
msg_rule: .ascii "tiny-go: namespace init: allowing writes beneath the overlay failed\n"
	.equ len_rule, . - msg_rule
msg_args: .ascii "tiny-go: namespace init: bad arguments\n"
	.equ len_args, . - msg_args
msg_slave: .ascii "tiny-go: namespace init: making mounts slaves failed\n"
	.equ len_slave, . - msg_slave
msg_proc: .ascii "tiny-go: namespace init: mounting /proc failed\n"
	.equ len_proc, . - msg_proc
msg_bind: .ascii "tiny-go: namespace init: binding the state directory read-only failed\n"
	.equ len_bind, . - msg_bind
msg_overlay: .ascii "tiny-go: namespace init: mounting the overlay of the working directory failed\n"
	.equ len_overlay, . - msg_overlay
msg_work: .ascii "tiny-go: namespace init: making the overlay's work directory readable failed\n"
	.equ len_work, . - msg_work
msg_cwd: .ascii "tiny-go: namespace init: entering the working directory failed\n"
	.equ len_cwd, . - msg_cwd
msg_hide: .ascii "tiny-go: namespace init: hiding a path from the command failed\n"
	.equ len_hide, . - msg_hide
msg_caps: .ascii "tiny-go: namespace init: dropping capabilities failed\n"
	.equ len_caps, . - msg_caps
msg_seccomp: .ascii "tiny-go: namespace init: loading the seccomp filter failed\n"
	.equ len_seccomp, . - msg_seccomp
msg_landlock: .ascii "tiny-go: namespace init: enforcing Landlock failed\n"
	.equ len_landlock, . - msg_landlock
msg_tree: .ascii "tiny-go: namespace init: binding the working directory nodev failed\n"
	.equ len_tree, . - msg_tree
msg_journal: .ascii "tiny-go: namespace init: loading the journal's filter failed\n"
	.equ len_journal, . - msg_journal
msg_listener: .ascii "tiny-go: namespace init: handing the journal's listener to tiny-go failed\n"
	.equ len_listener, . - msg_listener
msg_exec: .ascii "tiny-go: the command cannot be executed\n"
	.equ len_exec, . - msg_exec
