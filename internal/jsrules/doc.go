// Package jsrules holds the few JavaScript rules reel reproduces byte for
// byte because the systems whose files it reads and writes are JavaScript
// programs: JSON.parse and JSON.stringify of a value (Parse, Append,
// AppendSorted), the order of an object's own keys, string length in
// UTF-16 code units, and what JavaScript counts as white space. (The number and string encoders of JSON.stringify are
// sessionlog.AppendNumber and sessionlog.AppendString.)
package jsrules
