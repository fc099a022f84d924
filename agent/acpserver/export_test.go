package acpserver

// RetellDecoded makes srv retell loaded histories the decoded way only
// (no frame written straight from the log's bytes), for tests that hold
// the two ways to each other.
func RetellDecoded(srv *Server) { srv.decodedRetell = true }
