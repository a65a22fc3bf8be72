"""estatebot: notebook-first toolkit for real-estate chatbots."""
