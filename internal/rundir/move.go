package rundir

// Rename moves the entry from to to inside d (os.Root: neither path can
// leave d); every parent element of both is checked as Create checks it,
// and an existing entry at to is replaced.
func (d *Dir) Rename(from, to string) error {
	f, err := d.clean(from)
	if err != nil {
		return err
	}
	t, err := d.clean(to)
	if err != nil {
		return err
	}
	if err := d.checkParents(f); err != nil {
		return err
	}
	if err := d.checkParents(t); err != nil {
		return err
	}
	return d.root.Rename(f, t)
}

// Remove removes the file or empty directory rel inside d (a symlink is
// removed, never followed).
func (d *Dir) Remove(rel string) error {
	r, err := d.clean(rel)
	if err != nil {
		return err
	}
	if err := d.checkParents(r); err != nil {
		return err
	}
	return d.root.Remove(r)
}
