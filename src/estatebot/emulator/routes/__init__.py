"""The operations of the service, in groups that :class:`~estatebot.emulator.app.Emulator` joins.

:mod:`.base` holds the state the operations share and the steps every one takes before its own
work; :mod:`.chatbots` (Edit, ModelList, GetSession), :mod:`.chat` (ClientAsk) and
:mod:`.listings` (RealEstateCreate, Update, List and Delete) hold the operations themselves.
"""
