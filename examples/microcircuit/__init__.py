"""The Potjans & Diesmann (2014) cortical microcircuit (PD14) on eventjax, as the INM-6 reference defines it."""
