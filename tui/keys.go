package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key binding of the TUI, with the help it shows. Hints
// spell modifiers out (ctrl+c).
type KeyMap struct {
	Up, Down, Top, Bottom key.Binding
	Enter, Back           key.Binding
	Command, Filter       key.Binding
	Pause, Refresh        key.Binding
	// Left and Right scroll a table wider than the window sideways;
	// Internal shows or hides the internal topics' rows.
	Left, Right, Internal key.Binding
	Help, Quit            key.Binding
	// Abort is the action of a screen with one (abort a hanging
	// transaction), Yes confirms it.
	Abort, Yes key.Binding
	// Complete and Submit work inside the command line and the filter.
	Complete, Submit, Cancel key.Binding
}

// DefaultKeyMap is klog tui's key map (k9s habits).
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k/up", "up")),
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j/down", "down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "drill in")),
		Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Command:  key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "screen")),
		Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Left:     key.NewBinding(key.WithKeys("h", "left"), key.WithHelp("←/→", "columns")),
		Right:    key.NewBinding(key.WithKeys("l", "right"), key.WithHelp("→", "columns")),
		Internal: key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "internal")),
		Pause:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Refresh:  key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "refresh")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Abort:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "abort (asks first)")),
		Yes:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "confirm")),
		Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete")),
		Submit:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go")),
		Cancel:   key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel")),
	}
}

// ShortHelp is the help line under every screen.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Command, k.Filter, k.Left, k.Internal, k.Enter, k.Back, k.Pause, k.Help, k.Quit}
}

// FullHelp is the ? screen.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Top, k.Bottom},
		{k.Left, k.Internal},
		{k.Enter, k.Back, k.Command, k.Filter},
		{k.Pause, k.Refresh, k.Help, k.Quit},
		{k.Complete, k.Submit, k.Cancel, k.Abort},
	}
}
