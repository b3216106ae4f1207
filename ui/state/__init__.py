"""What a view is: the sidebar's settings bound to the link (controls) and presenter mode (presenter)."""
