package fetchsvc

// SetAfterBudgetCheck installs a hook run by every budget reservation
// between reading the count and taking the slot. Call it before the
// service gets requests.
func (s *Service) SetAfterBudgetCheck(f func()) { s.afterBudgetCheck = f }
