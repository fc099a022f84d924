// Package jsonl is reel's default session-log backend: one JSON Lines file
// per session.
//
// # Layout
//
// Line 1 is the session header object. Every further line is either one
// event record ({"type","seq","time","data","sourceEventSeqs"?,"surfaceOp"?},
// in that key order) or a packed chunk row that stores a run of at least three
// consecutive same-block assistant/chunk deltas:
//
//	{"type":"text-chunks"|"reasoning-chunks","seq0":S,"time0":T,
//	 "data":{"turn","step","index","dt":[gaps…],"texts":[…]}}
//	{"type":"tool-call-chunks","seq0":S,"time0":T,
//	 "data":{"turn","step","index","dt":[…],"id","name"?,"args":[…]}}
//
// Member k of a row is the event with seq seq0+k and time time0+dt[0]+…+dt[k-1].
// Readers accept packed, unpacked and mixed layouts; writers always produce
// the canonical packed layout, and only an event whose bytes are exactly what
// expansion rebuilds is packed, so decode→encode is lossless.
//
// # Torn tails
//
// An append is one write of whole lines. A crash can leave a partial last
// line; damage after the last complete turn/end is a torn tail, dropped on
// load and truncated away before the next append. Damage before it is
// corruption and the log is refused.
package jsonl
