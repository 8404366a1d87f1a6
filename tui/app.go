package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// screen is one screen of the TUI. It owns its data and tables; the root
// model owns size, keys, refresh, errors and which screen is shown.
type screen interface {
	// name is the screen's command (:topics).
	name() string
	// title is the header's text for the screen as it is now (the topic
	// drilled into).
	title() string
	// fetch returns what the screen needs read now and an id telling
	// that request apart from others of the screen (another topic).
	fetch() (id string, fn fetchFunc)
	// loaded applies the answer to the fetch with id, read at now. It
	// returns the error for the error bar, nil when the screen shows the
	// error itself or there is none.
	loaded(id string, v any, err error, now time.Time) error
	// list is the table the cursor and the filter work on.
	list() *table
	// enter drills into the row under the cursor, back returns from it;
	// each reports whether it did (then the screen needs data).
	enter() bool
	back() bool
	// view renders the screen's body in width × height.
	view(s Styles, width, height int) string
}

// action is what a screen's action key would do to its selected row:
// What describes it for the y/n question and the outcome line, Do does
// it.
type action struct {
	What string
	Do   func(ctx context.Context, src Source) error
}

// actionScreen is a screen with an action on its selected row that
// changes the cluster (the abort of a hanging transaction); --readonly
// forbids it.
type actionScreen interface {
	// action is the action on the selected row; false when none applies.
	action() (action, bool)
}

// actionMsg is the outcome of an action.
type actionMsg struct {
	what string
	err  error
}

// argScreen is a screen its command gives an argument (:seg orders/0).
type argScreen interface {
	setArg(arg string) error
}

// internalScreen is a screen with rows of internal topics, hidden
// unless shown.
type internalScreen interface {
	setInternal(show bool)
}

// readState is how fresh a screen's data is: when it was last read in
// full, and whether the refreshes since failed (then the screen still
// shows that read's values, marked stale).
type readState struct {
	good   time.Time
	failed bool
}

// fetchFunc reads one screen's data from src.
type fetchFunc func(ctx context.Context, src Source) (any, error)

// Messages of the root model.
type (
	// dataMsg is the answer of a fetch.
	dataMsg struct {
		screen, id string
		v          any
		err        error
	}
	// tickMsg is the refresh timer firing; only the tick of the current
	// generation refreshes, so a timer left over from before a manual
	// refresh does nothing.
	tickMsg struct{ gen int }
)

// input modes of the root model.
type mode int

const (
	modeNormal  mode = iota
	modeCommand      // typing a :command
	modeFilter       // typing a /filter
	modeConfirm      // asking y/n before an action
)

// model is the root model: window size, quit, help, errors, refresh and
// routing between screens. It never reads the cluster itself: screens say
// what to fetch and the fetch runs in a tea.Cmd.
type model struct {
	src     Source
	opts    Options
	styles  Styles
	keys    KeyMap
	help    help.Model
	screens []screen
	cur     int

	width, height int
	showHelp      bool
	mode          mode
	// pending is the action asked for, waiting for y (modeConfirm);
	// notice the last action's outcome, shown until the next key.
	pending   *action
	notice    string
	noticeBad bool
	input     string // the command line or filter being typed
	err       error

	paused   bool
	inFlight bool // a fetch runs; never more than one
	again    bool // a refresh was asked while one was in flight
	tickGen  int
	// reads is each screen's last good read and whether the refreshes
	// since failed, by screen name.
	reads map[string]*readState
	// internal shows the internal topics' rows (i).
	internal bool

	// fetchContext bounds one fetch; schedule arms the refresh timer
	// (tea.Tick; tests record it instead); now is the clock.
	fetchContext func() (context.Context, context.CancelFunc)
	schedule     func(d time.Duration, msg tea.Msg) tea.Cmd
	now          func() time.Time
}

// newModel returns the root model showing the first screen of opts.
func newModel(src Source, opts Options) *model {
	opts = opts.withDefaults()
	m := &model{
		src:    src,
		opts:   opts,
		styles: DefaultStyles(),
		keys:   DefaultKeyMap(),
		help:   help.New(),
		screens: []screen{
			newClusterScreen(),
			newTopicsScreen(),
			newGroupsScreen(),
			newTxnScreen(),
			newHangingScreen(opts.HangingAfter),
			newCleanerScreen(),
			newEventsScreen(),
			newUsersScreen(),
			newACLsScreen(),
			newQuotasScreen(),
			newClientsScreen(),
			newPartitionScreen(),
			newSegmentsScreen(),
			newConfigsScreen(),
			newTailScreen(),
		},
		width:  80,
		height: 24,
		fetchContext: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), opts.FetchTimeout)
		},
		schedule: func(d time.Duration, msg tea.Msg) tea.Cmd {
			return tea.Tick(d, func(time.Time) tea.Msg { return msg })
		},
		now:   opts.Now,
		reads: map[string]*readState{},
	}
	if i := m.screenIndex(opts.Screen); i >= 0 {
		m.cur = i
	}
	return m
}

// screenIndex returns the index of the screen named name, -1 if none.
func (m *model) screenIndex(name string) int {
	for i, s := range m.screens {
		if s.name() == name {
			return i
		}
	}
	return -1
}

func (m *model) screen() screen { return m.screens[m.cur] }

// Init implements tea.Model: the first fetch.
func (m *model) Init() tea.Cmd { return m.refresh() }

// refresh starts a fetch of the current screen's data, unless one is in
// flight: then it fetches again as soon as that one answers.
func (m *model) refresh() tea.Cmd {
	if m.inFlight {
		m.again = true
		return nil
	}
	m.inFlight = true
	scr := m.screen()
	id, fn := scr.fetch()
	name, src, fetchContext := scr.name(), m.src, m.fetchContext
	return func() tea.Msg {
		ctx, cancel := fetchContext()
		defer cancel()
		v, err := fn(ctx, src)
		return dataMsg{screen: name, id: id, v: v, err: err}
	}
}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		return m, nil
	case dataMsg:
		return m, m.answered(msg)
	case actionMsg:
		// The outcome stays on the status line until the next key (a
		// refresh's error would replace an error bar).
		m.notice, m.noticeBad = "done: "+msg.what, false
		if msg.err != nil {
			m.notice, m.noticeBad = "failed: "+msg.what+": "+errorLine(msg.err), true
		}
		return m, m.refresh()
	case tickMsg:
		if msg.gen != m.tickGen || m.paused {
			return m, nil
		}
		return m, m.refresh()
	case tea.KeyPressMsg:
		return m.keyPress(msg)
	}
	return m, nil
}

// answered applies a fetch's answer to its screen, if the screen still
// wants it, and arms the next refresh: the interval starts when the last
// fetch ended, so polls never overlap. A refresh asked for meanwhile (a
// screen switched or drilled into) runs now instead.
func (m *model) answered(msg dataMsg) tea.Cmd {
	m.inFlight = false
	i := m.screenIndex(msg.screen)
	id, _ := m.screens[i].fetch()
	if id == msg.id {
		scr := m.screens[i]
		err := scr.loaded(msg.id, msg.v, msg.err, m.now())
		st := m.reads[msg.screen]
		if st == nil {
			st = &readState{}
			m.reads[msg.screen] = st
		}
		st.failed = failed(msg)
		if !st.failed {
			st.good = m.now()
		}
		scr.list().stale = st.failed
		if i == m.cur {
			m.err = err
		}
	}
	if m.again {
		m.again = false
		return m.refresh()
	}
	if m.paused {
		return nil
	}
	m.tickGen++
	return m.schedule(m.opts.Refresh, tickMsg{gen: m.tickGen})
}

// failed reports whether a fetch's answer failed: an error and nothing
// read. A partial answer (some nodes or items unread) did not fail, nor
// did one without admin API, which its screen explains.
func failed(msg dataMsg) bool {
	if msg.err == nil || errors.Is(msg.err, ErrNoAdminAPI) {
		return false
	}
	return msg.v == nil || reflect.ValueOf(msg.v).IsZero()
}

// keyPress handles a key: the command line and the filter take all keys
// while open; otherwise global keys first, then the screen's.
func (m *model) keyPress(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch m.mode {
	case modeCommand:
		return m, m.commandKey(msg)
	case modeFilter:
		m.filterKey(msg)
		return m, nil
	case modeConfirm:
		return m, m.confirmKey(msg)
	}
	m.notice = ""
	k := m.keys
	if m.showHelp {
		if key.Matches(msg, k.Quit) {
			return m, tea.Quit
		}
		m.showHelp = false // any other key closes help
		return m, nil
	}
	l := m.screen().list()
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
	case key.Matches(msg, k.Command):
		m.mode, m.input = modeCommand, ""
	case key.Matches(msg, k.Filter):
		m.mode, m.input = modeFilter, l.filter
	case key.Matches(msg, k.Pause):
		m.paused = !m.paused
		if !m.paused {
			return m, m.refresh()
		}
	case key.Matches(msg, k.Refresh):
		return m, m.refresh()
	case key.Matches(msg, k.Left):
		l.scroll(-1)
	case key.Matches(msg, k.Right):
		l.scroll(1)
	case key.Matches(msg, k.Internal):
		m.internal = !m.internal
		for _, s := range m.screens {
			if is, ok := s.(internalScreen); ok {
				is.setInternal(m.internal)
			}
		}
	case key.Matches(msg, k.Abort):
		m.ask()
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.Top):
		l.move(-len(l.rows))
	case key.Matches(msg, k.Bottom):
		l.move(len(l.rows))
	case key.Matches(msg, k.Enter):
		if m.screen().enter() {
			return m, m.refresh()
		}
	case key.Matches(msg, k.Back):
		switch {
		case m.screen().back():
			return m, m.refresh()
		case l.filter != "":
			l.setFilter("")
		default:
			m.err = nil
		}
	}
	return m, nil
}

// ask asks y/n before the screen's action on the selected row; readonly
// refuses it.
func (m *model) ask() {
	a, ok := m.screen().(actionScreen)
	if !ok {
		m.err = fmt.Errorf("screen %s has no action", m.screen().name())
		return
	}
	act, ok := a.action()
	switch {
	case !ok:
		m.err = errors.New("no row to act on")
	case m.opts.Readonly:
		m.err = fmt.Errorf("readonly: not allowed to %s", act.What)
	default:
		m.pending, m.mode, m.err = &act, modeConfirm, nil
	}
}

// confirmKey takes the answer to ask: y runs the action, anything else
// drops it.
func (m *model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	act := m.pending
	m.pending, m.mode = nil, modeNormal
	if act == nil {
		return nil
	}
	if !key.Matches(msg, m.keys.Yes) {
		m.notice = "not done: " + act.What
		return nil
	}
	src, fetchContext := m.src, m.fetchContext
	return func() tea.Msg {
		ctx, cancel := fetchContext()
		defer cancel()
		return actionMsg{what: act.What, err: act.Do(ctx, src)}
	}
}

// commands are the names the command line completes, screens first.
func (m *model) commands() []string {
	var out []string
	for _, s := range m.screens {
		out = append(out, s.name())
	}
	return append(out, "quit")
}

// completions returns the commands starting with prefix.
func (m *model) completions(prefix string) []string {
	var out []string
	for _, c := range m.commands() {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// commandKey edits and runs the :command line.
func (m *model) commandKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Cancel):
		m.mode, m.input = modeNormal, ""
	case key.Matches(msg, k.Complete):
		if c := m.completions(m.input); len(c) > 0 {
			m.input = commonPrefix(c)
		}
	case key.Matches(msg, k.Submit):
		m.mode = modeNormal
		return m.run(strings.TrimSpace(m.input))
	default:
		m.input = edit(m.input, msg)
	}
	return nil
}

// run runs a command: a screen's name, or a prefix only one screen has,
// switches to it.
func (m *model) run(cmd string) tea.Cmd {
	if cmd == "" {
		return nil
	}
	if cmd == "q" || cmd == "quit" {
		return tea.Quit
	}
	cmd, arg, _ := strings.Cut(cmd, " ")
	arg = strings.TrimSpace(arg)
	c := m.completions(cmd)
	if i := m.screenIndex(cmd); i >= 0 {
		c = []string{cmd}
	}
	switch {
	case len(c) == 1 && c[0] == "quit":
		return tea.Quit
	case len(c) == 1:
		i := m.screenIndex(c[0])
		if arg != "" {
			a, ok := m.screens[i].(argScreen)
			if !ok {
				m.err = fmt.Errorf("screen %s takes no argument", c[0])
				return nil
			}
			if err := a.setArg(arg); err != nil {
				m.err = err
				return nil
			}
		}
		m.cur = i
		m.err = nil
		return m.refresh()
	case len(c) == 0:
		m.err = fmt.Errorf("no screen %q; screens: %s", cmd, strings.Join(m.commands(), " "))
	default:
		m.err = fmt.Errorf("%q is ambiguous: %s", cmd, strings.Join(c, " "))
	}
	return nil
}

// filterKey edits the /filter, which applies as it is typed.
func (m *model) filterKey(msg tea.KeyPressMsg) {
	k := m.keys
	l := m.screen().list()
	switch {
	case key.Matches(msg, k.Cancel):
		m.mode, m.input = modeNormal, ""
		l.setFilter("")
	case key.Matches(msg, k.Submit):
		m.mode = modeNormal
	default:
		m.input = edit(m.input, msg)
		l.setFilter(m.input)
	}
}

// edit applies a key to a line being typed: printable text is appended,
// backspace deletes the last character.
func edit(s string, msg tea.KeyPressMsg) string {
	switch msg.String() {
	case "backspace", "ctrl+h":
		r := []rune(s)
		if len(r) > 0 {
			r = r[:len(r)-1]
		}
		return string(r)
	case "ctrl+u":
		return ""
	}
	if msg.Text != "" {
		return s + msg.Text
	}
	return s
}

// commonPrefix is the longest prefix of every string in ss.
func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// View implements tea.Model.
func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "klog tui"
	return v
}

// render draws the whole window: header, body, status line, help line.
func (m *model) render() string {
	s := m.styles
	header := s.Header.Render("klog") + "  " + s.Title.Render(m.screen().title())
	if m.opts.Brokers != "" {
		header += "  " + s.Dim.Render(m.opts.Brokers)
	}
	switch {
	case m.paused:
		header += "  " + s.Paused.Render("paused")
	default:
		header += "  " + s.Dim.Render("refresh "+m.opts.Refresh.String())
	}
	if m.inFlight {
		header += s.Dim.Render(" …")
	}
	header += m.freshness()
	if m.opts.Readonly {
		header += "  " + s.Readonly.Render("readonly")
	}
	bodyHeight := max(1, m.height-3)
	var body string
	if m.showHelp {
		body = m.help.FullHelpView(m.keys.FullHelp()) + "\n\n" + s.Dim.Render("screens: "+strings.Join(m.commands()[:len(m.screens)], " "))
	} else {
		body = m.screen().view(s, m.width, bodyHeight)
	}
	body = fit(body, bodyHeight)
	var status string
	switch {
	case m.mode == modeCommand:
		status = s.Prompt.Render(":"+m.input) + "  " + s.Dim.Render(strings.Join(m.completions(m.input), " "))
	case m.mode == modeFilter:
		status = s.Prompt.Render("/" + m.input)
	case m.mode == modeConfirm:
		status = s.Bad.Render(m.pending.What+"? ") + s.Prompt.Render("y to confirm, any other key cancels")
	case m.err != nil:
		status = s.Error.Render(errorLine(m.err))
	case m.notice != "" && m.noticeBad:
		status = s.Error.Render(m.notice)
	case m.notice != "":
		status = s.Dim.Render(m.notice)
	case m.screen().list().filter != "":
		status = s.Prompt.Render("/" + m.screen().list().filter)
	}
	out := header + "\n" + body + "\n" + status + "\n" + m.help.ShortHelpView(m.keys.ShortHelp())
	return cut(out, m.width)
}

// freshness is the header's note of when the current screen's data was
// read: the time of the last read, or when the refreshes since failed,
// that the values shown are stale and since when.
func (m *model) freshness() string {
	st := m.reads[m.screen().name()]
	switch {
	case st == nil:
		return ""
	case !st.failed:
		return "  " + m.styles.Dim.Render("at "+st.good.Format("15:04:05"))
	case st.good.IsZero():
		return "  " + m.styles.Bad.Render("no data read")
	}
	age := m.now().Sub(st.good).Truncate(time.Second)
	return "  " + m.styles.Bad.Render(fmt.Sprintf("stale %s: last read at %s", age, st.good.Format("15:04:05")))
}

// cut cuts every line of s to width cells, so that no line wraps.
func cut(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width-1, "") + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// errorLine renders an error on one line.
func errorLine(err error) string {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if errors.Is(err, context.DeadlineExceeded) {
		msg = "timed out: " + msg
	}
	return msg
}

// fit cuts or pads s to exactly h lines.
func fit(s string, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
