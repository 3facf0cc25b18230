"""The daily deal: one deal a day per game for everyone, its boards and its share text."""
