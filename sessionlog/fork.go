package sessionlog

// ForkSeed is the seed of a session forked from events: events[0..end]
// (end is the index of a turn/end event) followed by session/end-seed,
// stamped with the last copied event's time. `reel log fork` and ACP's
// session/fork both seed their new log with it.
func ForkSeed(events []Event, end int) []Event {
	seed := append([]Event(nil), events[:end+1]...)
	last := seed[len(seed)-1]
	return append(seed, Event{Type: TypeEndSeed, Seq: len(seed), Time: last.Time,
		Data: EndSeedData{}.AppendJSON(nil)})
}
