package tui

import "charm.land/lipgloss/v2"

// Styles is every style the TUI draws with; screens take theirs from here.
type Styles struct {
	Header    lipgloss.Style // the top line
	Title     lipgloss.Style // a screen's title in the header
	Paused    lipgloss.Style
	Readonly  lipgloss.Style
	TableHead lipgloss.Style
	Selected  lipgloss.Style // the row under the cursor
	Changed   lipgloss.Style // a value that changed since the last refresh
	Bad       lipgloss.Style // an unhealthy value: offline, under-replicated, expired
	Dim       lipgloss.Style // secondary text
	Error     lipgloss.Style // the error bar
	Prompt    lipgloss.Style // the command line and filter
}

// DefaultStyles are the styles of klog tui.
func DefaultStyles() Styles {
	return Styles{
		Header:    lipgloss.NewStyle().Bold(true),
		Title:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		Paused:    lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		Readonly:  lipgloss.NewStyle().Foreground(lipgloss.Color("13")),
		TableHead: lipgloss.NewStyle().Bold(true).Underline(true),
		Selected:  lipgloss.NewStyle().Reverse(true),
		Changed:   lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		Bad:       lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		Dim:       lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		Error:     lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		Prompt:    lipgloss.NewStyle().Foreground(lipgloss.Color("14")),
	}
}
