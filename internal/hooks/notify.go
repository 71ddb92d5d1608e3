package hooks

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Terminal notification styles.
const (
	NotifyOff    = "off"
	NotifyBell   = "bell"   // BEL: most terminals flash or mark the tab
	NotifyOSC9   = "osc9"   // iTerm2, WezTerm, Windows Terminal, kitty: a desktop notification
	NotifyOSC777 = "osc777" // urxvt, foot, Ghostty, VTE: a desktop notification with a title
)

// DefaultNotifyAfter is how long a turn runs before its end is notified.
const DefaultNotifyAfter = 30 * time.Second

// Notifier tells the terminal that tiny-go waits for the user.
type Notifier struct {
	Style string
	W     io.Writer // the terminal; nil notifies nothing
	mu    sync.Mutex
}

// Notify writes the notification for message in the configured style.
func (n *Notifier) Notify(message string) {
	if n == nil || n.W == nil {
		return
	}
	seq := Sequence(n.Style, "tiny-go", message)
	if seq == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	_, _ = io.WriteString(n.W, seq)
}

// Sequence is the bytes that notify in style ("" for off or unknown).
// Control characters (and OSC 777's field separator in the title) are
// taken out, so a message cannot end the sequence early.
func Sequence(style, title, message string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return ' '
			}
			return r
		}, s)
	}
	switch style {
	case NotifyBell:
		return "\a"
	case NotifyOSC9:
		return fmt.Sprintf("\x1b]9;%s\x07", clean(message))
	case NotifyOSC777:
		return fmt.Sprintf("\x1b]777;notify;%s;%s\x07", strings.ReplaceAll(clean(title), ";", ","), clean(message))
	}
	return ""
}
