package forge

// AtCommit reports whether the location names its ref by a full commit
// id. A branch or tag name may move, so what it served once says nothing
// about what it serves now.
func (l Location) AtCommit() bool { return isCommitID(l.Ref) }
