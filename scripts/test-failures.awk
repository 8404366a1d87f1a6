# What a failed stage of scripts/test.sh failed on, from the stage's output,
# for the summary at the end of the run (a CI log is often read from its
# last lines only):
#
#   awk -v stage=NAME -f scripts/test-failures.awk STAGE.log
#
# Prints the lines that say what failed (at most 30), then one "rerun:"
# line per failure (at most 12) with the command that runs it alone, its
# seed or inputs included. BIN stands for a klog built with go build -o BIN
# ./cmd/klog, BROKERS for a klog up --memory (klog up -n 3 for a 3-nodes
# stage), KAFKA for the Kafka 4.4 broker of scripts/kafka/kafka.sh start;
# in a security stage, SASL_SSL_BROKERS, SSL_BROKERS and DIR (its secure
# directory) for a klog up --secure (klog up -n 3 --secure for a 3-nodes
# stage), SASL_PLAINTEXT_BROKERS for a listener with SCRAM users.
# Prints nothing when it finds nothing; test.sh then shows the stage's last
# lines.
#
# What it knows:
#   - go test, with or without -v (the go test stage, kgo-suite): each
#     "--- FAIL: TestX" with its output (below it without -v, the test's
#     log lines before it with -v), a panic and the test frame under it, a
#     timeout's running tests, compile errors; a seed a test logs as
#     KLOG_TEST_SEED=N (testkit.Seed); one rerun per package, from its
#     "FAIL<TAB>PKG" line;
#   - the compat matrix (Go, Python, JavaScript and Java runners alike):
#     "RESULT CLIENT SCENARIO FAIL why", and compare.sh's differences;
#   - chaos ("CHAOS NAME FAIL"), hostile ("PROBE NAME FAIL");
#   - the checks of smoke, docs (scripts/docs/quickstart.sh), tools.sh,
#     klogcmds.sh, ondisk.sh and the Kafka
#     Streams check ("FAIL GROUP/NAME: why", the Streams summary with its
#     inputs), test.sh's own "FAIL part: ..." lines;
#   - protodiff's table of unexplained mismatches;
#   - anything else saying FAIL, timed out, did not start/build/close/
#     finish, or died.

function say(s) {
	if (s in said)
		return
	said[s] = 1
	shown[++nshown] = s
}

function rerun(s) {
	if (("rerun: " s) in said)
		return
	said["rerun: " s] = 1
	reruns[++nreruns] = "rerun: " s
}

# A seed the test logged (testkit.Seed: "seed N (rerun with KLOG_TEST_SEED=N)").
function take_seed(line) {
	if (match(line, /KLOG_TEST_SEED=[0-9]+/))
		seed = substr(line, RSTART, RLENGTH) " "
}

# go_rerun PKG: the rerun of the tests that failed in package PKG.
function go_rerun(pkg, names, i) {
	names = ""
	for (i = 1; i <= ntests; i++)
		names = names (i > 1 ? "|" : "") tests[i]
	run = ntests > 0 ? "-run '^(" names ")$' " : ""
	if (stage == "security/kgo-suite")
		rerun("KGO_TEST_TLS=ca:DIR/ca.pem,cert:DIR/client-app.pem,key:DIR/client-app.key " (ntests > 0 ? "KGO_SUITE_RUN='^(" names ")$' " : "") "scripts/compat/kgo-suite.sh SSL_BROKERS")
	else if (stage == "security/kgo-scram")
		rerun("KGO_TEST_SCRAM=USER:PASSWORD:512 KGO_TEST_SCRAM_SEEDS=SASL_PLAINTEXT_BROKERS KGO_SUITE_RUN='^(" (ntests > 0 ? names : "TestSCRAMAuth|TestSCRAMAuthBadCredentials") ")$' scripts/compat/kgo-suite.sh BROKERS")
	else if (stage ~ /^kgo-suite/)
		rerun((ntests > 0 ? "KGO_SUITE_RUN='^(" names ")$' " : "") (stage ~ /3-nodes/ ? "KGO_TEST_RF=3 " : "") "scripts/compat/kgo-suite.sh BROKERS")
	else
		rerun(seed "go test -race -count=1 " run pkg)
	ntests = 0
	seed = ""
	split("", listed)
}

function add_test(name) {
	sub(/\/.*/, "", name) # a subtest reruns with its test
	if (!(name in listed)) {
		listed[name] = 1
		tests[++ntests] = name
	}
}

{ sub(/\r$/, "") }

# --- go test ---------------------------------------------------------------
/^=== (RUN|CONT|PAUSE|NAME) / { nrecent = 0; next }
/^ *--- FAIL: / {
	say($0)
	# With -v the test's log lines came before its FAIL line.
	for (i = 1; i <= nrecent; i++)
		say(recent[i])
	nrecent = 0
	match($0, /^ */)
	indent = RLENGTH
	below = 10
	add_test($3)
	next
}
below > 0 && match($0, /^[ \t]+/) && RLENGTH > indent {
	say($0)
	take_seed($0)
	below--
	next
}
{ below = 0 }
/^[ \t]+[^ \t]+\.go:[0-9]+: / {
	if (nrecent == 6) {
		for (i = 1; i < 6; i++)
			recent[i] = recent[i + 1]
		nrecent = 5
	}
	recent[++nrecent] = $0
	take_seed($0)
	next
}
/^panic: / {
	say($0)
	frame = 1
	timedout = $0 ~ /test timed out/
	next
}
timedout && /^\t\t[A-Za-z_][^ ]* \(/ { say($0); add_test($1); next }
frame && /_test\.go:[0-9]+/ { say($0); frame = 0; next }
/^[^ \t]+\.go:[0-9]+:[0-9]+: / { say($0); next } # a compile error
/^FAIL\t[^ \t]+/ {
	say($0)
	split($0, f, "\t")
	pkg = f[2]
	sub(/ .*/, "", pkg)
	go_rerun(pkg)
	frame = 0
	timedout = 0
	next
}

# --- compat matrix (scripts/compat/run.sh, compare.sh) ------------------------
/^RESULT [^ ]+ [^ ]+ FAIL/ {
	say($0)
	if (stage == "reference")
		rerun("scripts/compat/run.sh KAFKA " $2)
	else if (stage ~ /^security\/mtls/)
		rerun("KLOG_COMPAT_SECURITY=DIR/app-mtls.properties KLOG_COMPAT_SCENARIOS=" $3 " scripts/compat/run.sh SSL_BROKERS " $2)
	else if (stage ~ /^security\//)
		rerun("KLOG_COMPAT_SECURITY=DIR/app.properties KLOG_COMPAT_SCENARIOS=" $3 " scripts/compat/run.sh SASL_SSL_BROKERS " $2)
	else
		rerun("scripts/compat/run.sh BROKERS " $2)
	next
}
/ FAIL: not a documented difference$/ {
	say($0)
	rerun("KLOG_COMPAT_RESULTS=K scripts/compat/run.sh BROKERS " $1 "; KLOG_COMPAT_RESULTS=A scripts/compat/run.sh KAFKA " $1 "; scripts/compat/compare.sh K A")
	next
}
/^compare: [0-9]+ cells alike, [1-9]/ { say($0); next }

# --- chaos, hostile --------------------------------------------------------------
/^CHAOS [^ ]+ FAIL/ { say($0); rerun("go run ./scripts/chaos -klog BIN -scenario " $2 " -timeout 60s"); next }
/^PROBE [^ ]+ FAIL/ { say($0); rerun("scripts/hostile/run.sh BIN -probe " $2); next }

# --- checks of the reference stage and smoke ----------------------------------------
/^reference: klog ready at/ { target = "klog"; brokers = "BROKERS" }
/^reference: Kafka 4.4 ready at/ { target = "kafka"; brokers = "KAFKA" }
/^FAIL smoke\// { say($0); rerun("scripts/smoke/run.sh BIN"); next }
/^FAIL docs\// { say($0); rerun("scripts/docs/quickstart.sh BIN"); next }
/^FAIL tools\// && stage == "security/tools" { say($0); rerun("scripts/kafka/tools.sh SASL_SSL_BROKERS --target klog --secure DIR"); next }
/^FAIL tools\// { say($0); rerun("scripts/kafka/tools.sh " brokers " --target " target); next }
/^FAIL klogcmds\// { say($0); rerun("KLOG_BIN=BIN scripts/kafka/klogcmds.sh " brokers " --target " target); next }
/^FAIL ondisk\// { say($0); rerun("KLOG_BIN=BIN scripts/kafka/ondisk.sh"); next }
/^FAIL streams\// { say($0); streams = 1; next }
/^streams: [0-9]+ passed, [1-9][0-9]* failed/ {
	# The run's inputs: records, words, where the kills landed.
	say($0)
	match($0, /\([0-9]+ records, [0-9]+ words/)
	split(substr($0, RSTART + 1, RLENGTH - 1), in_, " ")
	rerun((stage ~ /^security\/mtls/ ? "KLOG_COMPAT_SECURITY=DIR/app-mtls.properties " : stage ~ /^security\// ? "KLOG_COMPAT_SECURITY=DIR/app.properties " : "") "KLOG_STREAMS_RECORDS=" in_[1] " KLOG_STREAMS_WORDS=" in_[3] " KLOG_STREAMS_KEEP=1 scripts/compat/streams.sh " (brokers == "" ? "BROKERS" : brokers))
	next
}

# --- protodiff ---------------------------------------------------------------------
/^CASE +FIELD +KLOG +KAFKA/ { table = 1; next }
table && /^$/ { table = 0 }
table {
	say($0)
	if (!(($1) in listed)) {
		listed[$1] = 1
		cases = cases (cases == "" ? "" : "|") $1
	}
	next
}
/^protodiff: [0-9]+ cases/ {
	if ($0 !~ / 0 unexplained field mismatches/ || $0 !~ / 0 cases failed to set up/) {
		say($0)
		flags = cases ~ /^authz-/ ? "-authz -klog BROKERS -klog-sasl SASL_BROKERS -kafka KAFKA -kafka-sasl SASL_BROKERS" : "-klog BROKERS -kafka KAFKA"
		rerun("go run ./scripts/kafka/protodiff " flags (cases == "" ? "" : " -case '^(" cases ")$'"))
	}
	cases = ""
	split("", listed)
	next
}

# --- anything else that says it failed ---------------------------------------------
/^(ok|PASS) / { next }
/(^|[ :])FAIL[: ]|timed out|did not (start|build|close|finish)|died/ { say($0) }

END {
	for (i = 1; i <= nshown && i <= 30; i++)
		print shown[i]
	if (nshown > 30)
		print "(" nshown - 30 " more lines: the stage's output above)"
	for (i = 1; i <= nreruns && i <= 12; i++)
		print reruns[i]
}
